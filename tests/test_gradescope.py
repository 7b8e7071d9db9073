"""grade gradescope build: a bundle per Gradescope's specification, run here on a simulated /autograder tree."""
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.catalog import load_catalog
from tests.conftest import CORPUS, ROOT, run_grade

EX1, EX3 = load_catalog().get(1), load_catalog().get(3)
VENV_BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("gs") / "autograder.zip"
    proc = run_grade("gradescope", "build", out, "--exercises", "1,3", "--timeout", "20", "--source", ROOT,
                     timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


def test_bundle_has_the_required_files_at_its_root(bundle):
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        config = json.loads(z.read("attention-kit.json"))
        wheel_name = next(n for n in names if n.endswith(".whl"))
        setup = z.read("setup.sh").decode()
    assert {"setup.sh", "run_autograder", "attention-kit.json"} <= set(names) and all("/" not in n for n in names)
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert config["exercises"] == [1, 3] and config["timeout"] == 20
    assert wheel_name.startswith("attention_kit-") and wheel_name in setup
    with zipfile.ZipFile(bundle) as z, zipfile.ZipFile(z.open(wheel_name)) as wheel:
        inside = set(wheel.namelist())
    assert {"grader/cli.py", "grader/instructor/gradescope.py", "grader/_kit/solutions/03_causal_attention.py",
            "grader/_kit/templates/gradescope/run_autograder"} <= inside


def _autograder(tmp_path, bundle, submission: dict) -> Path:
    """A /autograder look-alike: source/ is the unzipped bundle, submission/ the student's files."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
    for rel, text in submission.items():
        (root / "submission" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / rel).write_text(text)
    (root / "submission").mkdir(exist_ok=True)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
    for name in ("setup.sh", "run_autograder"):
        assert subprocess.run(["bash", "-n", root / "source" / name]).returncode == 0
    proc = subprocess.run([root / "source" / "run_autograder"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return root / "results" / "results.json"


def _check_spec(doc: dict) -> None:
    assert isinstance(doc["score"], float) and isinstance(doc["execution_time"], int)
    assert isinstance(doc["output"], str) and doc["stdout_visibility"] == "hidden"
    for t in doc["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert t["status"] in ("passed", "failed") and 0 <= t["score"] <= t["max_score"]
        assert t["visibility"] in ("visible", "after_due_date", "after_published", "hidden")
    assert doc["score"] == sum(t["score"] for t in doc["tests"])


def test_run_autograder_writes_results_json(tmp_path, bundle):
    results = _autograder(tmp_path, bundle, {
        EX1.file: EX1.solution_path.read_text(),
        f"exercises/{EX3.file}": (CORPUS / "03" / "mask_inverted.py").read_text(),
        "notes.md": "not graded",
    })
    doc = json.loads(results.read_text())
    _check_spec(doc)
    ex1 = [t for t in doc["tests"] if t["name"].startswith("Exercise 1 ")]
    ex3 = [t for t in doc["tests"] if t["name"].startswith("Exercise 3 ")]
    assert ex1 and all(t["status"] == "passed" and t["score"] == t["max_score"] > 0 for t in ex1)
    assert any(t["status"] == "failed" for t in ex3) and any(t["status"] == "passed" for t in ex3)
    assert not any(t["name"].startswith("Exercise 2 ") for t in doc["tests"])
    assert "mask is inverted" in doc["output"].lower() and "Hint:" in doc["output"]
    failing = [t for t in ex3 if t["status"] == "failed"]
    assert "Most likely:" in failing[0]["output"]
    assert doc["extra_data"]["exercises"]["3"]["diagnoses"][0] == "mask_inverted"


def test_a_missing_file_is_one_failed_test_worth_the_exercise(tmp_path, bundle):
    doc = json.loads(_autograder(tmp_path, bundle, {EX1.file: EX1.solution_path.read_text()}).read_text())
    _check_spec(doc)
    (missing,) = [t for t in doc["tests"] if t["name"].startswith("Exercise 3 ")]
    assert missing["status"] == "failed" and missing["score"] == 0 and missing["max_score"] > 0
    assert EX3.file in missing["output"]
    assert doc["score"] == sum(t["max_score"] for t in doc["tests"] if t["name"].startswith("Exercise 1 "))


def test_build_usage_errors(tmp_path):
    proc = run_grade("gradescope", "build", tmp_path / "bundle.tar")
    assert proc.returncode == 2 and ".zip" in proc.stderr
    proc = run_grade("gradescope", "build", tmp_path / "b.zip", "--source", tmp_path)
    assert proc.returncode == 2 and "--source" in proc.stderr


def test_a_grader_failure_still_gives_gradescope_a_results_json(tmp_path):
    from grader.instructor.gradescope import run

    config = tmp_path / "attention-kit.json"
    config.write_text(json.dumps({"exercises": [99]}))  # an exercise this kit does not have
    doc = json.loads(run(root=tmp_path, config=config).read_text())
    assert doc["score"] == 0 and doc["tests"] == [] and "autograder itself failed" in doc["output"]
