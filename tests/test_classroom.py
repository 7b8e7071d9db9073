"""grade classroom: a GitHub Classroom workflow that installs the kit and grades each exercise of a push."""
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from grader.catalog import load_catalog
from grader.instructor.grading import max_points
from tests.conftest import run_grade

SPEC = "attention-kit @ git+https://example.org/course/attention-kit.git@v0.1.0"


def test_workflow_parses_and_grades_each_exercise(tmp_path):
    repo = tmp_path / "template"
    proc = run_grade("classroom", repo, "--exercises", "1,3", "--kit-spec", SPEC, "--timeout", "20", timeout=200)
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
    assert "push" in doc["on"] and doc["permissions"]["checks"] == "write"
    steps = doc["jobs"]["autograding"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install the grader")["run"]
    assert "download.pytorch.org/whl/cpu" in install and shlex.split(install.splitlines()[1])[-1] == SPEC
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache@"))
    assert steps.index(cache) < steps.index(next(s for s in steps if s.get("name") == "Install the grader"))
    assert cache["with"]["path"] == "~/.cache/pip" and "${{ runner.os }}" in cache["with"]["key"]
    grading = [s for s in steps if "grade exercise" in s.get("run", "") or "grade exercise" in
               s.get("with", {}).get("command", "")]
    assert len(grading) == 1  # graded once: the per-exercise steps only read the verdicts
    for number in (1, 3):
        ex = load_catalog().get(number)
        line = f"grade exercise {number} exercises/{ex.file} --device cpu --timeout 20 --json > verdicts/{number}.json"
        assert line in grading[0]["run"]
    graders = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader@")]
    assert [g["id"] for g in graders] == ["exercise-1", "exercise-3"]
    for g, number in zip(graders, (1, 3)):
        ex = load_catalog().get(number)
        assert shlex.split(g["with"]["command"]) == ["python", "-m", "grader.instructor.classroom",
                                                     f"verdicts/{number}.json"]
        assert g["with"]["max-score"] == max_points(number) > 0 and g["with"]["timeout"] >= 1
        assert (repo / "exercises" / ex.file).read_bytes() == ex.skeleton_path.read_bytes()
    reporter = steps[-1]
    assert reporter["uses"].startswith("classroom-resources/autograding-grading-reporter@")
    assert reporter["with"]["runners"] == "exercise-1,exercise-3"
    assert reporter["env"] == {"EXERCISE-1_RESULTS": "${{ steps.exercise-1.outputs.result }}",
                               "EXERCISE-3_RESULTS": "${{ steps.exercise-3.outputs.result }}"}
    readme = (repo / "README.md").read_text()
    assert f"pip install {SPEC}" in readme
    refused = run_grade("classroom", tmp_path / "t2", "--kit-spec", "attention-kit==0.1.0")
    assert refused.returncode == 2 and "not published on PyPI" in refused.stderr


def test_the_workflow_grades_once_and_each_step_reads_its_verdict(tmp_path):
    repo = tmp_path / "template"
    assert run_grade("classroom", repo, "--exercises", "2", timeout=200).returncode == 0  # the default: a wheel
    steps = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())["jobs"]["autograding"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install the grader")["run"]
    wheel = shlex.split(install.splitlines()[1])[-1]
    assert wheel.startswith("./wheels/attention_kit-") and (repo / wheel).is_file()
    grading = next(s for s in steps if s.get("name", "").startswith("Grade every exercise"))["run"]
    check = shlex.split(next(s for s in steps if s.get("id") == "exercise-2")["with"]["command"])

    def push() -> subprocess.CompletedProcess:
        subprocess.run(["bash", "-c", "set -e\n" + grading], cwd=repo, check=True, timeout=200,
                       env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
        return subprocess.run([sys.executable, *check[1:]], cwd=repo, capture_output=True, text=True, timeout=60)

    first = push()  # as the workflow runs it, on the untouched skeleton
    assert first.returncode == 1 and "failed" in first.stdout
    ex = load_catalog().get(2)
    (repo / "exercises" / ex.file).write_text(ex.solution_path.read_text())
    second = push()
    assert second.returncode == 0 and "passed" in second.stdout
    (repo / "verdicts" / "2.json").write_text("")  # grading died: no points, a clear line
    third = subprocess.run([sys.executable, *check[1:]], cwd=repo, capture_output=True, text=True)
    assert third.returncode == 1 and "no verdict" in third.stdout
