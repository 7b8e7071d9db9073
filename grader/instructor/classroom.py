"""`grade classroom DIR`: a GitHub Classroom template repository that grades every push.

DIR gets the learners' handout (unless it already has exercises/), with the kit's wheel in
wheels/ unless a kit spec is given, and .github/workflows/classroom.yml: restore pip's cache (torch
and the kit are downloaded once, not per push), install torch (CPU) and the kit, grade every
exercise once (`grade exercise N --json` into verdicts/), then one
classroom-resources/autograding-command-grader step per exercise that only reads its verdict
(`python -m grader.instructor.classroom verdicts/N.json`: exit code 0 = the exercise's points), the
verdicts as an artifact, and the autograding reporter that sends the points to GitHub Classroom.

The workflow runs in the student's own repository, so whatever it installs (the kit, with its
reference solutions) is within the student's reach: use Classroom for learning, and batch or
Gradescope grading with hidden suites for assessments that must not leak.
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from grader import __version__
from grader.catalog import kit_dir
from grader.instructor import select_exercises
from grader.instructor.grading import max_points
from grader.instructor.kitwheel import check_kit_spec
from grader.instructor.release import WHEELS, install_line, release

WORKFLOW = Path(".github") / "workflows" / "classroom.yml"


def workflow(*, exercises: str | None = None, kit_spec: str, timeout: float = 30.0) -> str:
    selected = select_exercises(exercises)
    steps = [{"number": ex.number, "title": ex.title, "file": ex.file, "slug": ex.slug,
              "step": f"exercise-{ex.number}", "points": max_points(ex.number)} for ex in selected]
    step_minutes = max(2, math.ceil(2 * timeout / 60) + 1)  # the cold start and the time budget, twice over
    env = Environment(loader=FileSystemLoader(str(kit_dir("templates") / "classroom")), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    cache_key = hashlib.sha256(f"{kit_spec}\0{__version__}".encode()).hexdigest()[:12]
    return env.get_template("classroom.yml").render(
        exercises=steps, kit_spec=kit_spec, timeout=timeout, step_minutes=step_minutes, cache_key=cache_key,
        job_minutes=15 + step_minutes * len(steps), version=__version__)


def write_classroom(*, directory: Path, exercises: str | None = None, kit_spec: str | None = None,
                    wheel: Path | None = None, timeout: float = 30.0) -> list[Path]:
    """Write the workflow (and the handout, when directory has no exercises/ yet); returns the files written."""
    directory = Path(directory)
    if kit_spec is not None:
        check_kit_spec(kit_spec)
    written = []
    if not (directory / "exercises").is_dir():
        written += release(directory=directory, audience="learners", kit_spec=kit_spec, wheel=wheel,
                           exercises=exercises, force=True)
        spec = kit_spec or "./" + next(str(p.relative_to(directory)) for p in written if p.suffix == ".whl")
    else:
        spec = install_line(directory, kit_spec=kit_spec, wheel=wheel).removeprefix("pip install ")
        written += sorted((directory / WHEELS).glob("*.whl")) if kit_spec is None else []
    text = workflow(exercises=exercises, kit_spec=spec, timeout=timeout)
    target = directory / WORKFLOW
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return written + [target]


def check_verdict(path: Path) -> int:
    """The workflow's per-exercise step: print the verdict grade wrote, exit 0 if it passed (else 1)."""
    try:
        v = json.loads(Path(path).read_text(encoding="utf-8"))
        passed, line = bool(v["passed"]), f"exercise {v['exercise']} ({v['slug']}): {v['score']}/{v['max_score']}"
    except (OSError, ValueError, KeyError, TypeError):
        print(f"no verdict in {path}: grading did not finish (see the 'Grade every exercise' step)")
        return 1
    print(line + (" passed" if passed else " failed"))
    for d in v.get("diagnoses", [])[:2]:
        print(f"  {d.get('title', '')}: {d.get('hint', '')}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(check_verdict(Path(sys.argv[1])) if len(sys.argv) == 2 else 2)
