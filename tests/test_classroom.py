"""grade classroom: a GitHub Classroom workflow that installs the kit and grades each exercise of a push."""
import shlex

import yaml

from grader.catalog import load_catalog
from tests.conftest import grade_json, run_grade

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
    graders = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader@")]
    assert [g["id"] for g in graders] == ["exercise-1", "exercise-3"]
    for g, number in zip(graders, (1, 3)):
        ex = load_catalog().get(number)
        assert shlex.split(g["with"]["command"]) == ["grade", "exercise", str(number), f"exercises/{ex.file}",
                                                     "--device", "cpu", "--timeout", "20"]
        _, skeleton = grade_json("exercise", number, ex.skeleton_path)
        assert g["with"]["max-score"] == skeleton["max_score"] > 0 and g["with"]["timeout"] >= 1
        assert (repo / "exercises" / ex.file).read_bytes() == ex.skeleton_path.read_bytes()
    json_step = next(s for s in steps if s.get("name") == "Verdicts as JSON")["run"]
    assert "grade exercise 3 exercises/03_causal_attention.py --device cpu --timeout 20 --json" in json_step
    reporter = steps[-1]
    assert reporter["uses"].startswith("classroom-resources/autograding-grading-reporter@")
    assert reporter["with"]["runners"] == "exercise-1,exercise-3"
    assert reporter["env"] == {"EXERCISE-1_RESULTS": "${{ steps.exercise-1.outputs.result }}",
                               "EXERCISE-3_RESULTS": "${{ steps.exercise-3.outputs.result }}"}
    readme = (repo / "README.md").read_text()
    assert f"pip install {SPEC}" in readme


def test_the_workflow_command_runs_in_the_repository(tmp_path):
    repo = tmp_path / "template"
    assert run_grade("classroom", repo, "--exercises", "2", timeout=200).returncode == 0
    step = next(s for s in yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
                ["jobs"]["autograding"]["steps"] if s.get("id") == "exercise-2")
    argv = shlex.split(step["with"]["command"])
    assert argv[0] == "grade"
    proc = run_grade(*argv[1:], cwd=repo)  # as the workflow runs it, on the untouched skeleton
    assert proc.returncode == 1 and "not started" in proc.stdout
    ex = load_catalog().get(2)
    (repo / "exercises" / ex.file).write_text(ex.solution_path.read_text())
    assert run_grade(*argv[1:], cwd=repo).returncode == 0
