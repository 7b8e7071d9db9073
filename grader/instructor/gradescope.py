"""Gradescope: the autograder bundle (`grade gradescope build`) and its run (`grade gradescope run`).

The bundle is a zip with, at its root, what Gradescope's autograder specification asks for:
setup.sh (install, once per image), run_autograder (per submission), plus the kit as a wheel
built from this checkout and attention-kit.json (which exercises, the time budget, visibility).
A run grades $ROOT/submission and writes $ROOT/results/results.json: a top-level score, output and
execution_time, and one entry in tests[] per hidden test (name, number, score, max_score, status
"passed"/"failed", output, visibility), plus one per missing exercise file.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from grader import __version__
from grader.catalog import PACKAGE_DIR, kit_dir, load_catalog
from grader.pack import default_pack, use_pack
from grader.instructor import UsageError, select_exercises

CONFIG = "attention-kit.json"
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")


class BundleError(Exception):
    """The bundle could not be built (the wheel build failed): an internal error."""


def checkout() -> Path | None:
    """The source checkout this kit runs from, if it runs from one (editable install or a clone)."""
    root = PACKAGE_DIR.parent
    pyproject = root / "pyproject.toml"
    return root if pyproject.is_file() and 'name = "attention-kit"' in pyproject.read_text(encoding="utf-8") else None


def build_wheel(source: Path, dest: Path) -> Path:
    """pip wheel --no-deps SOURCE; without build isolation when hatchling is already installed (offline)."""
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "--quiet", "-w", str(dest), str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(dest.glob("attention_kit-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise BundleError(f"building the wheel failed: {(proc.stderr or proc.stdout).strip()[-600:]}")
    return wheels[-1]


def build_bundle(*, out: Path, source: Path | None = None, exercises: str | None = None, timeout: float = 30.0,
                 visibility: str = "visible", torch_spec: str = "torch>=2.2") -> Path:
    """Write the autograder zip to out; returns out."""
    if Path(out).suffix.lower() != ".zip":
        raise UsageError(f"the bundle must be a .zip file, not {Path(out).name!r}")
    if visibility not in VISIBILITIES:
        raise UsageError(f"unknown visibility {visibility!r}; choose one of {', '.join(VISIBILITIES)}")
    source = Path(source) if source is not None else checkout()
    if source is None or not (source / "pyproject.toml").is_file():
        raise UsageError("no source checkout of attention-kit here to build the wheel from; pass --source DIR")
    numbers = [ex.number for ex in select_exercises(exercises)]
    env = Environment(loader=FileSystemLoader(str(kit_dir("templates") / "gradescope")), undefined=StrictUndefined,
                      keep_trailing_newline=True)
    with tempfile.TemporaryDirectory(prefix="attention-kit-wheel-") as tmp:
        wheel = build_wheel(source, Path(tmp))
        config = {"exercises": numbers, "timeout": timeout, "visibility": visibility, "kit": __version__}
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
            for name, values in (("setup.sh", {"wheel": wheel.name, "torch_spec": torch_spec}),
                                 ("run_autograder", {"config": CONFIG})):
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = 0o100755 << 16  # executable
                info.compress_type = zipfile.ZIP_DEFLATED
                bundle.writestr(info, env.get_template(name).render(**values))
            bundle.write(wheel, wheel.name)
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
    head = f"**Exercise {ex.number} · {ex.title}**: {r.score}/{r.max_score}"
    if r.status == "passed":
        return head + " — all tests passed."
    if r.status in ("missing", "rejected", "error"):
        return f"{head} — {r.note}"
    lines = [head]
    for d in (r.verdict or {}).get("diagnoses", [])[:2]:
        lines.append(f"- *{d['title']}*. {d['explanation']}")
        lines += [f"  - {e}" for e in d.get("evidence", [])[:3]]
        lines.append(f"  - Hint: {d['hint']}")
    return "\n".join(lines)


def results_document(results: list, *, visibility: str, elapsed: float) -> dict:
    """results.json per Gradescope's specification, from grading.ExerciseResult objects."""
    catalog = load_catalog()
    tests, summary = [], []
    for r in results:
        ex = catalog.get(r.number)
        summary.append(_exercise_summary(r, ex))
        verdict_tests = (r.verdict or {}).get("tests", [])
        if not verdict_tests:  # missing, rejected or not graded: one entry worth the whole exercise
            tests.append({"name": f"Exercise {ex.number} ({ex.slug}): {ex.file}", "number": f"{ex.number}.0",
                          "score": 0.0, "max_score": float(r.max_score), "status": "failed", "output": r.note,
                          "output_format": "text", "tags": [ex.slug], "visibility": visibility})
            continue
        diagnosis = (r.verdict or {}).get("diagnoses") or [None]
        first_failure = True
        for i, t in enumerate(verdict_tests, start=1):
            output = t["message"]
            if t["status"] not in ("passed", "skipped") and first_failure and diagnosis[0]:
                output += f"\n\nMost likely: {diagnosis[0]['title']}. Hint: {diagnosis[0]['hint']}"
                first_failure = False
            tests.append({"name": f"Exercise {ex.number} ({ex.slug}) · {t['category']} · {t['name']}",
                          "number": f"{ex.number}.{i}", "score": float(t["score"]), "max_score": float(t["points"]),
                          "status": "passed" if t["status"] == "passed" else "failed", "output": output.strip(),
                          "output_format": "text", "tags": [ex.slug, t["category"]], "visibility": visibility})
    return {
        "score": float(sum(r.score for r in results)),
        "execution_time": max(1, round(elapsed)),
        "output": "\n\n".join(summary),
        "output_format": "md",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"kit": __version__,
                       "exercises": {str(r.number): {"status": r.status, "diagnoses": r.diagnoses} for r in results}},
    }


def run(*, root: Path, config: Path | None = None) -> Path:
    """Grade root/submission, write root/results/results.json (an error document if grading fails)."""
    from grader.instructor.grading import grade_submission
    from grader.instructor.submissions import open_submission

    started = time.perf_counter()
    root = Path(root)
    settings = {"exercises": None, "timeout": 30.0, "visibility": "visible"}
    if config is not None and Path(config).is_file():
        settings.update(json.loads(Path(config).read_text(encoding="utf-8")))
    target = root / "results" / "results.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    if settings.get("pack") and config is not None:
        use_pack(Path(config).parent / settings["pack"])  # the bundle's exercise pack (gradescope build --pack)
    try:
        numbers = settings["exercises"] or [ex.number for ex in load_catalog().exercises]
        selected = [load_catalog().get(n) for n in numbers]
        submission_dir = root / "submission"
        submission_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="attention-kit-gs-") as scratch:
            sub = open_submission(submission_dir, "submission", Path(scratch), selected)
            results = grade_submission(numbers=numbers, files={n: str(p) for n, p in sub.files.items()},
                                       located=sub.located, rejected=sub.rejected, timeout=float(settings["timeout"]))
        doc = results_document(results, visibility=settings["visibility"], elapsed=time.perf_counter() - started)
    except Exception as exc:  # still give Gradescope a well-formed answer that says what went wrong
        doc = {"score": 0.0, "execution_time": max(1, round(time.perf_counter() - started)),
               "output": f"The autograder itself failed ({type(exc).__name__}: {exc}). Please tell your instructor.",
               "stdout_visibility": "hidden", "tests": []}
    target.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target
