"""Terminal presentation: Jinja templates from templates/, printed through rich (honours NO_COLOR)."""
from __future__ import annotations

import re
from functools import cache

import jinja2
from rich.console import Console
from rich.markup import escape
from rich.cells import cell_len
from rich.text import Text

from grader.catalog import kit_dir, load_catalog
from grader.results import Verdict


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(kit_dir("templates")), undefined=jinja2.StrictUndefined,
                             autoescape=False, keep_trailing_newline=False)
    env.filters["esc"] = lambda s: escape(str(s))
    return env


def verdict_text(v: Verdict, *, path: str, path_arg: str = "", verbose: bool = False, limit: int = 6,
                 watching: bool = False, upcoming=None) -> str:
    """Rich-markup text for one verdict: the named cause first with the failures it explains under it, then the
    failures it does not explain; repeated identical messages are folded unless verbose.
    upcoming: the exercise to do next (Workspace.next_exercise); without it, the one after in the catalog."""
    catalog = load_catalog()
    ex = catalog.get(v.exercise)
    failures = v.failures()
    explained, separate = by_cause(v)
    examples = _distinct(explained, 10**6 if verbose else 2)
    also = _distinct(separate, 10**6 if verbose else limit)
    line = verdict_line(v)
    return environment().get_template("verdict.term.j2").render(
        v=v, failures=failures, explained=explained, examples=examples, also=also,
        more_explained=len(explained) - len(examples), more_also=len(separate) - len(also), verbose=verbose,
        diagnosis=v.diagnoses[0] if v.diagnoses else None, hints=ex.hints, next=upcoming or catalog.next_after(ex),
        path=path, path_arg=path_arg, pack_arg=pack_arg(ex, path_arg), watching=watching, where=lambda n: where(v, n), line=line, excerpt=excerpt(v, line))


def pack_arg(ex, path_arg: str) -> str:
    """` --pack DIR` for the commands a verdict suggests, when a pack's file is graded outside its workspace."""
    import shlex

    return f" --pack {escape(shlex.quote(str(ex.pack.root)))}" if path_arg and not ex.pack.builtin else ""


def by_cause(v: Verdict) -> tuple[list, list]:
    """The failing tests the first diagnosis explains (its consequences), and the others."""
    failures = v.failures()
    return [t for t in failures if t.explained_by is not None], [t for t in failures if t.explained_by is None]


def verdict_line(v: Verdict) -> int | None:
    """The line a failing verdict shows: the localization's, else where a failure the cause explains (or any,
    without one) happened."""
    explained, _ = by_cause(v)
    return (v.localization or {}).get("line") or next((t.line for t in explained or v.failures() if t.line), None)


def _distinct(tests: list, limit: int) -> list:
    """At most limit tests, one per message."""
    shown, seen = [], set()
    for t in tests:
        if t.message not in seen and len(shown) < limit:
            shown.append(t)
            seen.add(t.message)
    return shown


def where(v: Verdict, line: int) -> str:
    """"line 12", or "cell 3, line 4" when the verdict is about a notebook."""
    return v.source.where(line) if v.source is not None else f"line {line}"


def excerpt(v: Verdict, line: int | None, width: int = 72) -> list[str]:
    """The source line with a marker under it, as pytest and rustc show it: `  26 |     scores = q @ k.T` then
    `     |              ^^^^^` under what the statement computes (else the whole line). The line is the
    submission's: control characters and escapes are removed, and it is rich-escaped by the template."""
    from grader.sandbox.textsafe import clean
    from grader.source import span

    text = getattr(v.source, "text", "")
    lines = text.splitlines()
    if not isinstance(line, int) or not 1 <= line <= len(lines):
        return []
    raw = lines[line - 1]
    cols = span(text, line)
    if cols is None:
        body = raw.lstrip()
        cols = (len(raw) - len(body), len(raw.rstrip()))
    start, end = cols

    def shown(part: str) -> str:
        return clean(part).expandtabs(4)

    before, marked = shown(raw[:start]), shown(raw[start:end]) or " "
    code = (before + marked + shown(raw[end:])).rstrip()
    if cell_len(code) > width:
        code = code[: width - 1] + "…"
    cell = v.source.cell_of(line) if v.source is not None else None
    number = str(cell[1] if cell else line)
    pad = max(0, min(cell_len(before), width - 1))
    carets = "^" * max(1, min(cell_len(marked), width - pad))
    return [f"{number} | {code}", f"{' ' * len(number)} | {' ' * pad}{carets}"]


def shown_failures(v: Verdict, *, limit: int = 6) -> tuple[list, int, int]:
    """For a short view (watch): at most limit failing tests, two the first diagnosis explains, then those it does
    not; how many it explains that are not shown, and how many others are not shown."""
    failures = v.failures()
    explained, separate = by_cause(v)
    shown = (_distinct(explained, 2) + _distinct(separate, limit))[:limit]
    consequences = sum(t not in shown for t in explained)
    return shown, consequences, len(failures) - len(shown) - consequences


STATUS_STYLE = {"passed": "[green]✓ passed[/]", "passed, failing now": "[yellow]✓ passed (failing now)[/]",
                "in progress": "[yellow]in progress[/]", "not started": "not started"}


def progress_table(ws, catalog, *, current=None):
    """The exercises with their titles and the workspace's status of each (`grade list`, and `l` in watch, which
    marks the exercise it watches with ▸); ws None: no status."""
    from rich.table import Table

    table = Table(*([""] if current else []), "#", "slug", "title", "status", box=None, pad_edge=False)
    for ex in catalog.exercises:
        mark = ["[bold]▸[/]" if ex.number == current.number else ""] if current else []
        table.add_row(*mark, str(ex.number), ex.slug, escape(ex.title), "-" if ws is None else STATUS_STYLE[ws.status(ex)])
    return table



def all_lines(verdicts: list[Verdict]) -> list[str]:
    """`grade all`: one line per exercise (mark, slug, score, the first mistake named), then how many passed."""
    lines = []
    for v in verdicts:
        mark = "[green]✓[/]" if v.passed else ("[yellow]○[/]" if v.state == "not_started" else "[red]✗[/]")
        why = "" if v.passed or not v.diagnoses else f"  {v.diagnoses[0].title}"
        lines.append(f"{mark} {v.exercise} {v.slug:<22} {v.score:>3}/{v.max_score:<3}{why}")
    return lines + [f"\n{sum(v.passed for v in verdicts)} of {len(verdicts)} exercises passed."]


def watch_parts():
    """The macros of templates/watch.term.j2 that make up watch's screen (status, verdict, prompt, keys...)."""
    return environment().get_template("watch.term.j2").module


def hint_text(ex, level: int) -> str:
    return f"Hint {level}/{len(ex.hints)} for exercise {ex.number} ({ex.slug}):\n  {ex.hints[level - 1]}"


def wrapped(out: Console, markup: str) -> Text:
    """Markup as rich Text, each line broken at word boundaries to the console's width, keeping its indent."""
    width = max(20, out.width)
    lines = []
    for line in Text.from_markup(markup).split("\n", allow_blank=True):
        plain = line.plain
        indent = min(len(plain) - len(plain.lstrip(" ")), width // 2)
        if cell_len(plain) <= width or not plain.strip():
            lines.append(line)
            continue
        label = re.match(r" *(?:[a-z][a-z ]{0,15}: )?", plain).end()  # "evidence: ..." hangs under its text
        hang = label if label - indent <= 10 else indent + 2
        first, *rest = line[indent:].wrap(out, width - indent, overflow="fold")
        for piece in rest:
            piece.rstrip()
        pieces = [(indent, first)]
        if rest:
            pieces += [(hang, p) for p in Text(" ").join(rest).wrap(out, width - hang, overflow="fold")]
        for margin, piece in pieces:
            piece.rstrip()
            lines.append(Text(" " * margin) + piece)
    return Text("\n").join(lines)


def show(out: Console, markup: str) -> None:
    """Print markup wrapped to the terminal's width (rich never breaks inside a word then)."""
    out.print(wrapped(out, markup), soft_wrap=True)


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def repro_text(v: Verdict, *, ex, path) -> str:
    """A short script that reproduces the first failing check (grade exercise N --repro)."""
    from grader.repro import script

    return script(v, ex=ex, path=path)
