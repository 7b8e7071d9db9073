"""grade classroom: a GitHub Classroom workflow that installs the kit and grades each exercise of a push.

Classroom's side, as read in the source of classroom-resources/autograding-grading-reporter (src/main.js,
src/notify-classroom.js): each runner's result is base64 JSON in the step output `result`; Classroom gets the sum
of every runner's tests' `score` out of the sum of their `max_score`, in the check run of the job named
`run-autograding-tests`.
"""
import base64
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader.catalog import load_catalog
from grader.instructor.grading import max_points
from grader.instructor.kitwheel import built_torch
from tests.conftest import CORPUS, run_grade

SPEC = "attention-kit @ git+https://example.org/course/attention-kit.git@v0.1.0"


def _steps(repo: Path) -> tuple[dict, list[dict]]:
    doc = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
    return doc, doc["jobs"]["run-autograding-tests"]["steps"]


def test_workflow_parses_and_grades_each_exercise(tmp_path):
    repo = tmp_path / "template"
    proc = run_grade("classroom", repo, "--exercises", "1,3", "--kit-spec", SPEC, "--timeout", "20", timeout=200)
    assert proc.returncode == 0, proc.stderr
    doc, steps = _steps(repo)
    assert list(doc["jobs"]) == ["run-autograding-tests"]  # the job whose check run Classroom's reporter writes
    assert {"push", "repository_dispatch"} <= set(doc["on"]) and doc["permissions"]["checks"] == "write"
    assert doc["jobs"]["run-autograding-tests"]["if"] == "github.actor != 'github-classroom[bot]'"
    install = next(s for s in steps if s.get("name") == "Install the grader")["run"].splitlines()
    torch_line = shlex.split(install[0])
    assert f"torch=={built_torch()}" in torch_line and "https://download.pytorch.org/whl/cpu" in torch_line
    assert "+" not in built_torch() and built_torch()[0].isdigit()
    assert shlex.split(install[1])[-1] == SPEC
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache@"))
    assert steps.index(cache) < steps.index(next(s for s in steps if s.get("name") == "Install the grader"))
    assert cache["with"]["path"] == "~/.cache/pip" and "${{ runner.os }}" in cache["with"]["key"]
    grading = [s for s in steps if "grade exercise" in s.get("run", "")]
    assert len(grading) == 1  # graded once: the per-exercise steps only read the verdicts
    for number in (1, 3):
        ex = load_catalog().get(number)
        line = f"grade exercise {number} exercises/{ex.file} --device cpu --timeout 20 --json > verdicts/{number}.json"
        assert line in grading[0]["run"]
    runners = [s for s in steps if s.get("id", "").startswith("exercise-")]
    assert [r["id"] for r in runners] == ["exercise-1", "exercise-3"]
    for r, number in zip(runners, (1, 3)):
        ex = load_catalog().get(number)
        assert shlex.split(r["run"]) == ["python", "-m", "grader.instructor.classroom", f"verdicts/{number}.json",
                                         "--max-score", str(max_points(number)), "--name",
                                         f"Exercise {number}: {ex.title}"]
        assert r["if"] == "always()" and (repo / "exercises" / ex.file).read_bytes() == ex.skeleton_path.read_bytes()
    reporter = steps[-1]
    assert reporter["uses"].startswith("classroom-resources/autograding-grading-reporter@")
    assert reporter["with"]["runners"] == "exercise-1,exercise-3"
    assert reporter["env"] == {"EXERCISE-1_RESULTS": "${{ steps.exercise-1.outputs.result }}",
                               "EXERCISE-3_RESULTS": "${{ steps.exercise-3.outputs.result }}"}
    readme = (repo / "README.md").read_text()
    assert f"pip install {SPEC}" in readme
    refused = run_grade("classroom", tmp_path / "t2", "--kit-spec", "attention-kit==0.1.0")
    assert refused.returncode == 2 and "not published on PyPI" in refused.stderr


def _classroom_points(output: Path) -> tuple[int, int, str]:
    """What the reporter sends to Classroom from one runner's output (notify-classroom.js: tests' scores, max_score)."""
    line = output.read_text().strip().splitlines()[-1]
    assert line.startswith("result=")
    result = json.loads(base64.b64decode(line.removeprefix("result=")))
    assert result["version"] == 1 and all({"name", "status", "score"} <= set(t) for t in result["tests"])
    return sum(t["score"] for t in result["tests"]), result["max_score"], result["status"]


@pytest.mark.skipif(os.environ.get("ATTENTION_KIT_INSTALL_TESTS") != "1",
                    reason="builds the template's wheel and runs its workflow twice: .ci/run (ATTENTION_KIT_INSTALL_TESTS=1)")
def test_the_workflow_grants_partial_credit_per_exercise(tmp_path):
    repo = tmp_path / "template"
    assert run_grade("classroom", repo, "--exercises", "2", timeout=200).returncode == 0  # the default: a wheel
    _, steps = _steps(repo)
    install = next(s for s in steps if s.get("name") == "Install the grader")["run"]
    wheel = shlex.split(install.splitlines()[1])[-1]
    assert wheel.startswith("./wheels/attention_kit-") and (repo / wheel).is_file()
    grading = next(s for s in steps if s.get("name", "").startswith("Grade every exercise"))["run"]
    check = shlex.split(next(s for s in steps if s.get("id") == "exercise-2")["run"])
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    ex = load_catalog().get(2)

    def push(text: str) -> tuple[subprocess.CompletedProcess, tuple]:  # as the workflow runs on a push
        (repo / "exercises" / ex.file).write_text(text)
        subprocess.run(["bash", "-c", "set -e\n" + grading], cwd=repo, check=True, timeout=200, env=env)
        output = tmp_path / "github_output"
        output.write_text("")
        proc = subprocess.run([sys.executable, *check[1:]], cwd=repo, capture_output=True, text=True, timeout=60,
                              env={**env, "GITHUB_OUTPUT": str(output)})
        return proc, _classroom_points(output)

    buggy, (points, most, status) = push((CORPUS / "02" / "mask_inverted.py").read_text())
    verdict = json.loads((repo / "verdicts" / "2.json").read_text())
    assert buggy.returncode == 0 and status == "fail" and most == max_points(2)
    assert 0 < points == verdict["score"] < most  # the checks it passed, not all or nothing
    assert f"Exercise 2: {ex.title}: {points}/{most} failed" in buggy.stdout


def test_a_file_not_started_or_a_missing_verdict_scores_nothing(tmp_path, monkeypatch):
    from grader.instructor.classroom import report

    verdict = tmp_path / "5.json"
    tests = [{"name": "a", "category": "shape", "status": "passed", "message": "", "points": 2, "score": 2},
             {"name": "b", "category": "numerics", "status": "failed", "message": "<b>x</b>\x1b[2J", "points": 3,
              "score": 0}]
    verdict.write_text(json.dumps({"passed": False, "state": "not_started", "score": 0, "max_score": 5,
                                   "tests": tests}))
    output = tmp_path / "out"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    report(verdict, name="Exercise 5", max_score=5)
    assert _classroom_points(output) == (0, 5, "fail")
    verdict.write_text(json.dumps({"passed": False, "state": "graded", "score": 2, "max_score": 5, "tests": tests}))
    assert report(verdict, name="Exercise 5", max_score=5)["tests"][1]["message"] == "<b>x</b>"
    assert _classroom_points(output) == (2, 5, "fail")
    tests[1].update(status="passed", score=3)
    verdict.write_text(json.dumps({"passed": True, "state": "graded", "score": 5, "max_score": 5, "tests": tests}))
    report(verdict, name="Exercise 5", max_score=5)
    assert _classroom_points(output) == (5, 5, "pass")
    verdict.write_text("")  # grading died: no points, a clear line, the exercise's points still counted as possible
    result = report(verdict, name="Exercise 5", max_score=5)
    assert _classroom_points(output) == (0, 5, "error") and "no verdict" in result["tests"][0]["message"]
