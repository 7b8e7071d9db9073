"""`grade classroom DIR`: a GitHub Classroom template repository that grades every push.

DIR gets the learners' handout (unless it already has exercises/) and
.github/workflows/classroom.yml: install torch (CPU) and the kit, then one
classroom-resources/autograding-command-grader step per exercise running
`grade exercise N exercises/FILE` (exit code 0 = the exercise's points), the verdicts as JSON in
an artifact, and the autograding reporter that sends the points to GitHub Classroom.

The workflow runs in the student's own repository, so whatever it installs (the kit, with its
reference solutions) is within the student's reach: use Classroom for learning, and batch or
Gradescope grading with hidden suites for assessments that must not leak.
"""
from __future__ import annotations

import math
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from grader import __version__
from grader.catalog import kit_dir
from grader.instructor import select_exercises
from grader.instructor.grading import max_points
from grader.instructor.release import release

WORKFLOW = Path(".github") / "workflows" / "classroom.yml"


def workflow(*, exercises: str | None = None, kit_spec: str = f"attention-kit=={__version__}",
             timeout: float = 30.0) -> str:
    selected = select_exercises(exercises)
    steps = [{"number": ex.number, "title": ex.title, "file": ex.file, "slug": ex.slug,
              "step": f"exercise-{ex.number}", "points": max_points(ex.number)} for ex in selected]
    step_minutes = max(2, math.ceil(2 * timeout / 60) + 1)  # the cold start and the time budget, twice over
    env = Environment(loader=FileSystemLoader(str(kit_dir("templates") / "classroom")), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return env.get_template("classroom.yml").render(
        exercises=steps, kit_spec=kit_spec, timeout=timeout, step_minutes=step_minutes,
        job_minutes=15 + 2 * step_minutes * len(steps), version=__version__)


def write_classroom(*, directory: Path, exercises: str | None = None, kit_spec: str = f"attention-kit=={__version__}",
                    timeout: float = 30.0) -> list[Path]:
    """Write the workflow (and the handout, when directory has no exercises/ yet); returns the files written."""
    directory = Path(directory)
    text = workflow(exercises=exercises, kit_spec=kit_spec, timeout=timeout)
    written = []
    if not (directory / "exercises").is_dir():
        written += release(directory=directory, audience="learners", install=f"pip install {kit_spec}",
                           exercises=exercises, force=True)
    target = directory / WORKFLOW
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return written + [target]
