"""Gradescope: the autograder bundle (`grade gradescope build`) and its run (`grade gradescope run`).

The bundle is a zip with, at its root, what Gradescope's autograder specification asks for:
setup.sh (install, once per image), run_autograder (per submission), plus the kit as a wheel
(built from a checkout, repacked from an installed kit, or the one given) and attention-kit.json
(which exercises, the time budget, visibility). A run grades $ROOT/submission and writes
$ROOT/results/results.json: a top-level score, output (Markdown, everything the submission
controls inside code spans) and execution_time, and one entry in tests[] per exercise, its checks
listed in the entry's output.
"""
from __future__ import annotations

import json
import tempfile
import time
import zipfile
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from grader import __version__
from grader.catalog import kit_dir, load_catalog
from grader.pack import default_pack, use_pack
from grader.instructor import UsageError, select_exercises
from grader.instructor.kitwheel import WheelError, built_torch, kit_wheel
from grader.instructor.markup import clean, md_block, md_code

CONFIG = "attention-kit.json"
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
BundleError = WheelError


def build_bundle(*, out: Path, source: Path | None = None, wheel: Path | None = None, exercises: str | None = None,
                 timeout: float = 30.0, visibility: str = "visible", stdout_visibility: str = "hidden",
                 torch_spec: str | None = None) -> Path:
    """Write the autograder zip to out; returns out. torch_spec: what setup.sh installs (default: the torch this
    kit runs with, pinned, so every submission is graded with the torch the kit was tested with)."""
    if Path(out).suffix.lower() != ".zip":
        raise UsageError(f"the bundle must be a .zip file, not {Path(out).name!r}")
    for v in (visibility, stdout_visibility):
        if v not in VISIBILITIES:
            raise UsageError(f"unknown visibility {v!r}; choose one of {', '.join(VISIBILITIES)}")
    numbers = [ex.number for ex in select_exercises(exercises)]
    torch_spec = torch_spec or f"torch=={built_torch()}"
    env = Environment(loader=FileSystemLoader(str(kit_dir("templates") / "gradescope")), undefined=StrictUndefined,
                      keep_trailing_newline=True)
    with tempfile.TemporaryDirectory(prefix="attention-kit-wheel-") as tmp:
        built = kit_wheel(Path(tmp), source=source, wheel=wheel)
        config = {"exercises": numbers, "timeout": timeout, "visibility": visibility,
                  "stdout_visibility": stdout_visibility, "kit": __version__}
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
            for name, values in (("setup.sh", {"wheel": built.name, "torch_spec": torch_spec}),
                                 ("run_autograder", {"config": CONFIG})):
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = 0o100755 << 16  # executable
                info.compress_type = zipfile.ZIP_DEFLATED
                bundle.writestr(info, env.get_template(name).render(**values))
            bundle.write(built, built.name)
            pack = default_pack()
            if not pack.builtin:  # an exercise pack travels in the bundle; its solutions stay out of the worker's view
                config["pack"] = "pack"
                for folder in (pack.exercises, pack.solutions, pack.checks):
                    for path in sorted(folder.glob("*.py")) + sorted(folder.glob("*.toml")):
                        bundle.write(path, f"pack/{folder.name}/{path.name}")
            bundle.writestr(CONFIG, json.dumps(config, indent=2) + "\n")
    return Path(out)


# -- the run, inside Gradescope -------------------------------------------------------------------
def _exercise_summary(r, ex) -> str:
    """Markdown: kit-written titles and hints as they are, anything from the submission as code."""
    head = f"**Exercise {ex.number} · {ex.title}**: {r.score}/{r.max_score}"
    if r.status == "passed":
        return head + " — all tests passed."
    if r.status in ("missing", "rejected", "error"):
        return f"{head}\n\n{md_block(r.note)}"
    lines = [head]
    for d in (r.verdict or {}).get("diagnoses", [])[:2]:
        lines.append(f"- *{clean(d['title'])}*. {clean(d['explanation'])}")
        lines += [f"  - {md_code(e)}" for e in d.get("evidence", [])[:3]]
        lines.append(f"  - Hint: {clean(d['hint'])}")
    return "\n".join(lines)


def _checks(r) -> str:
    """Plain text: the exercise's checks, failures first with their messages, then the diagnosis."""
    if r.status in ("missing", "rejected", "error") or not (r.verdict or {}).get("tests"):
        return clean(r.note or r.status, 2000)
    tests = r.verdict["tests"]
    bad = [t for t in tests if t["status"] not in ("passed", "skipped")]
    lines = [f"{len(tests) - len(bad)} of {len(tests)} checks passed."]
    for t in bad:
        lines.append(f"✗ {t['category']} · {clean(t['name'], 200)} ({t['score']}/{t['points']}): "
                     f"{clean(t['message'], 600)}")
    diagnoses = r.verdict.get("diagnoses") or []
    if diagnoses:
        d = diagnoses[0]
        lines.append(f"\nMost likely: {clean(d['title'])}. Hint: {clean(d['hint'])}")
    passed = [clean(t["name"], 200) for t in tests if t["status"] == "passed"]
    if passed:
        lines.append("\n✓ " + "\n✓ ".join(passed))
    return "\n".join(lines)


def results_document(results: list, *, visibility: str, elapsed: float, stdout_visibility: str = "hidden") -> dict:
    """results.json per Gradescope's specification, from grading.ExerciseResult objects: one test per exercise."""
    catalog = load_catalog()
    tests, summary = [], []
    for r in results:
        ex = catalog.get(r.number)
        summary.append(_exercise_summary(r, ex))
        tests.append({"name": f"Exercise {ex.number}: {ex.title} ({ex.file})", "number": str(ex.number),
                      "score": float(r.score), "max_score": float(r.max_score),
                      "status": "passed" if r.status == "passed" else "failed", "output": _checks(r),
                      "output_format": "text", "tags": [ex.slug], "visibility": visibility})
    return {
        "score": float(sum(r.score for r in results)),
        "execution_time": max(1, round(elapsed)),
        "output": "\n\n".join(summary),
        "output_format": "md",
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
        "tests": tests,
        "extra_data": {"kit": __version__,
                       "exercises": {str(r.number): {"status": r.status, "diagnoses": r.diagnoses} for r in results}},
    }


def run(*, root: Path, config: Path | None = None) -> Path:
    """Grade root/submission, write root/results/results.json (an error document if grading fails)."""
    from grader.instructor.grading import grade_submission
    from grader.instructor.outputs import OutputDir
    from grader.instructor.submissions import open_submission

    started = time.perf_counter()
    root = Path(root)
    settings = {"exercises": None, "timeout": 30.0, "visibility": "visible", "stdout_visibility": "hidden"}
    if config is not None and Path(config).is_file():
        settings.update(json.loads(Path(config).read_text(encoding="utf-8")))
    if settings.get("pack") and config is not None:
        use_pack(Path(config).parent / settings["pack"])  # the bundle's exercise pack (gradescope build --pack)
    with OutputDir(root / "results") as results_dir:  # opened before the submission runs
        try:
            numbers = settings["exercises"] or [ex.number for ex in load_catalog().exercises]
            selected = [load_catalog().get(n) for n in numbers]
            submission_dir = root / "submission"
            submission_dir.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="attention-kit-gs-") as scratch:
                sub = open_submission(submission_dir, "submission", Path(scratch), selected)
                results = grade_submission(numbers=numbers, files={n: str(p) for n, p in sub.files.items()},
                                           located=sub.located, rejected=sub.rejected, near=sub.near,
                                           timeout=float(settings["timeout"]))
            doc = results_document(results, visibility=settings["visibility"],
                                   stdout_visibility=settings["stdout_visibility"],
                                   elapsed=time.perf_counter() - started)
        except Exception as exc:  # still give Gradescope a well-formed answer that says what went wrong
            doc = {"score": 0.0, "execution_time": max(1, round(time.perf_counter() - started)),
                   "output": "The autograder itself failed. Please tell your instructor.\n\n"
                             + md_block(f"{type(exc).__name__}: {exc}"),
                   "output_format": "md", "stdout_visibility": "hidden", "tests": []}
        return results_dir.write("results.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
