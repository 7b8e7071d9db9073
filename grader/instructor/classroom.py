"""`grade classroom DIR`: a GitHub Classroom template repository that grades every push.

DIR gets the learners' handout (unless it already has exercises/), with the kit's wheel in
wheels/ unless a kit spec is given, and .github/workflows/classroom.yml: restore pip's cache (torch
and the kit are downloaded once, not per push), install the torch this kit was built with (CPU) and
the kit, grade every exercise once (`grade exercise N --json` into verdicts/), then one step per
exercise that reads its verdict and reports its points (`python -m grader.instructor.classroom
verdicts/N.json`), the verdicts as an artifact, and Classroom's reporter.

What Classroom's side expects, read in the source of classroom-resources/autograding-grading-reporter
(src/main.js, src/notify-classroom.js; v1, 2024): each runner named in `runners` hands over its result
as base64 JSON in the step output `result` (env RUNNER_RESULTS); the points sent to Classroom are the sum
of the scores of every runner's `tests` out of the sum of their `max_score`, written into the check
run of the job named `run-autograding-tests`. autograding-command-grader scores a test all or nothing,
so each exercise's step here writes that result itself: one test per check, scored with the check's
points. The workflow reacts to `repository_dispatch` as Classroom's own template does.

The workflow runs in the student's own repository, so whatever it installs (the kit, with its
reference solutions) is within the student's reach: use Classroom for learning, and batch or
Gradescope grading with hidden suites for assessments that must not leak.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import os
import shlex
import sys
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from grader import __version__
from grader.catalog import kit_dir
from grader.instructor import select_exercises
from grader.instructor.grading import max_points
from grader.instructor.kitwheel import built_torch, check_kit_spec
from grader.instructor.markup import clean
from grader.instructor.release import WHEELS, install_line, release

WORKFLOW = Path(".github") / "workflows" / "classroom.yml"
PYTHON = "3.11"


def workflow(*, exercises: str | None = None, kit_spec: str, timeout: float = 30.0) -> str:
    selected = select_exercises(exercises)
    steps = []
    for ex in selected:
        name, points = f"Exercise {ex.number}: {ex.title}", max_points(ex.number)
        command = shlex.join(["python", "-m", "grader.instructor.classroom", f"verdicts/{ex.number}.json",
                              "--max-score", str(points), "--name", name])
        steps.append({"number": ex.number, "file": ex.file, "name": name, "step": f"exercise-{ex.number}",
                      "points": points, "command": command})
    step_minutes = max(2, math.ceil(2 * timeout / 60) + 1)  # the cold start and the time budget, twice over
    env = Environment(loader=FileSystemLoader(str(kit_dir("templates") / "classroom")), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    cache_key = hashlib.sha256(f"{kit_spec}\0{__version__}\0{built_torch()}".encode()).hexdigest()[:12]
    return env.get_template("classroom.yml").render(
        exercises=steps, kit_spec=kit_spec, timeout=timeout, step_minutes=step_minutes, cache_key=cache_key,
        job_minutes=15 + step_minutes * len(steps), version=__version__, torch=built_torch(), python=PYTHON)


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


def runner_result(path: Path, *, name: str, max_score: int) -> dict:
    """What Classroom's reporter reads from one runner: one test per check, scored with the check's points."""
    try:
        v = json.loads(Path(path).read_text(encoding="utf-8"))
        tests, passed = v["tests"], bool(v["passed"])
        credited = v.get("state") != "not_started"  # a file not started scores 0 whatever its checks did
        entries = [{"name": clean(f"{t['category']}: {t['name']}", 200),
                    "status": "pass" if t["status"] in ("passed", "skipped") else "fail",
                    "score": int(t["score"]) if credited and t["status"] == "passed" else 0,
                    "message": clean(t.get("message", ""), 500), "test_code": "", "filename": "", "line_no": 0,
                    "duration": 0} for t in tests]
        max_score = int(v["max_score"])
    except (OSError, ValueError, KeyError, TypeError):
        return {"version": 1, "status": "error", "max_score": max_score,
                "tests": [{"name": name, "status": "error", "score": 0, "test_code": "", "filename": "", "line_no": 0,
                           "duration": 0, "message": f"no verdict in {path}: grading did not finish "
                                                     "(see the 'Grade every exercise' step)"}]}
    return {"version": 1, "status": "pass" if passed else "fail", "max_score": max_score, "tests": entries}


def report(path: Path, *, name: str, max_score: int) -> dict:
    """The workflow's per-exercise step: print the verdict, hand its result to the reporter ($GITHUB_OUTPUT)."""
    result = runner_result(path, name=name, max_score=max_score)
    points = sum(t["score"] for t in result["tests"])
    print(f"{name}: {points}/{result['max_score']} " + {"pass": "passed", "fail": "failed"}.get(result["status"], ""))
    for t in result["tests"]:
        if t["status"] != "pass":
            print(f"  ✗ {t['name']}: {t['message']}")
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        encoded = base64.b64encode(json.dumps(result).encode("utf-8")).decode("ascii")
        with open(target, "a", encoding="utf-8") as f:
            f.write(f"result={encoded}\n")
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.instructor.classroom",
                                     description="Report one exercise's verdict to GitHub Classroom's reporter.")
    parser.add_argument("verdict", type=Path)
    parser.add_argument("--max-score", type=int, required=True, help="the exercise's points if there is no verdict")
    parser.add_argument("--name", required=True)
    args = parser.parse_args(argv)
    report(args.verdict, name=args.name, max_score=args.max_score)
    return 0  # the points are in the result; the reporter fails the job when a runner did not pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
