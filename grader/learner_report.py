"""One graded exercise, written for the learner: a self-contained page (`grade exercise N --html`), the same
verdict as a fragment for a notebook cell (its CSS scoped to it), and as plain text where HTML cannot show."""
from __future__ import annotations

import datetime
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader import __version__
from grader.catalog import Exercise
from grader.explain import heatmap
from grader.htmlview import STATUS_LABELS, attention_panels, by_cause, code_view, environment, grouped, heatmap_view


@dataclass
class Guidance:
    """What the learner is told besides the verdict: where the code came from and what to do next."""
    where: str  # the file, or "this cell"
    show_hints: bool = True  # each diagnosis's hint (a notebook asks for them with --hint)
    hint: str = ""  # an exercise hint shown on its own ("Hint 2/4: ..."), or ""
    offer: str = ""  # how to get a hint when none is shown
    next_steps: list[str] = field(default_factory=list)


def status_of(verdict: dict) -> str:
    return "passed" if verdict["passed"] else ("not_started" if verdict.get("state") == "not_started" else "failed")


def learner_view(ex: Exercise, verdict: dict, attention: dict | None, source, guide: Guidance) -> dict:
    """verdict: Verdict.to_json(); attention: Verdict.attention (heat-map weights of a failing grade)."""
    tests = verdict.get("tests", [])
    status = status_of(verdict)
    failing = [t for t in tests if t["status"] not in ("passed", "skipped")]
    failed = status == "failed"
    explained, also = by_cause(failing)
    diagnoses = verdict.get("diagnoses", [])
    started = [d for d in diagnoses if d["id"] != "not_started"]
    nudge = next((d["evidence"][0] for d in diagnoses if d["id"] == "not_started" and d.get("evidence")), "")
    return {
        "number": ex.number, "title": ex.title, "slug": ex.slug, "status": status,
        "label": STATUS_LABELS[status], "score": verdict["score"], "max_score": verdict["max_score"],
        "duration": verdict.get("duration_s"), "where": guide.where, "nudge": nudge,
        "runs": bool(failing) and not any(t.get("code") == "not_implemented" for t in failing),
        "diagnoses": started if failed else [], "notes": verdict.get("notes", []),
        "failing": failing if failed else [],
        "explained_groups": grouped(explained) if failed else [], "explained_count": len(explained),
        "failing_groups": grouped(also) if failed else [], "also_count": len(also),
        "passed_count": sum(t["status"] == "passed" for t in tests), "test_count": len(tests),
        "maps": heatmap_view(attention) if failed else [],
        "code": code_view(source, ex.entry, failing, failed, verdict.get("localization")),
        "localization": verdict.get("localization") if failed else None,
        "output": verdict.get("output", ""), "guide": guide,
    }


def render_fragment(view: dict) -> str:
    """The verdict as one <div> with its own scoped style: safe to put inside another page (a notebook)."""
    return environment().get_template("verdict.html").render(s=view)


def render_page(view: dict) -> str:
    """The verdict as a self-contained HTML page (inline CSS and SVG, no script, no link)."""
    return environment().get_template("learner.html").render(
        s=view, version=__version__, generated=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"))


def render_text(view: dict, attention: dict | None = None, width: int = 78) -> str:
    """The same verdict as plain text, heat maps in Unicode blocks (a terminal IPython, a text-only front end)."""
    maps = []
    if view["status"] == "failed":
        for panels, titles in attention_panels(attention):
            maps += heatmap.term_lines(panels, titles, max_width=width) + [""]
    return environment().get_template("verdict.txt").render(s=view, maps=maps).rstrip() + "\n"


def cli_guidance(ex: Exercise, verdict: dict, where: str, following: Exercise | None) -> Guidance:
    """What `grade exercise N --html` adds: the first hint for a file not started, the commands that come next."""
    n = ex.number
    first = f"Hint 1/{len(ex.hints)}: {ex.hints[0]}" if ex.hints and verdict.get("state") == "not_started" else ""
    steps = []
    if verdict["passed"]:
        steps.append(f"Your code beside the reference: grade solution {n} --diff")
        steps.append(f"Next: grade exercise {following.number} · {following.title}" if following
                     else "That was the last exercise: grade list shows your progress.")
    return Guidance(where=where, hint=first, offer=f"More hints: grade hint {n} · the ideas behind it: grade explain {n}",
                    next_steps=steps)


def default_report_path(path: Path) -> Path:
    """Next to the exercise file: 03_causal_attention.py -> 03_causal_attention.report.html."""
    return path.with_name(f"{path.stem}.report.html")


def write_report(*, ex: Exercise, verdict, source, path: Path, output: Path | None = None,
                 following: Exercise | None = None) -> Path:
    """Write the learner's page for a graded file (output, or default_report_path) and return where it went.
    Written to a temporary name beside it, then renamed: a half-written page never replaces a good one."""
    target = Path(output) if output is not None else default_report_path(Path(path))
    data = verdict.to_json()
    page = render_page(learner_view(ex, data, verdict.attention, source, cli_guidance(ex, data, str(path), following)))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(page)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_file_report(*, ex: Exercise, verdict, path: Path, output: Path | None = None) -> Path:
    """write_report for a graded file: its code read back (a notebook's lines numbered by cell and line; none if it
    cannot be read now) and the catalog's next exercise."""
    from grader.catalog import load_catalog
    from grader.source import Unreadable, read_source

    try:
        source = read_source(path)
    except Unreadable:
        source = None
    return write_report(ex=ex, verdict=verdict, source=source, path=path, output=output,
                        following=load_catalog().next_after(ex))
