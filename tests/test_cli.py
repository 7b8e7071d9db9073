"""CLI behaviour: exit codes, one-line errors, workspaces, hints, solutions, JSON purity.

Commands that import torch run in this process (grade_here); the one-line errors, the JSON purity and
a workspace's cheap commands run as real processes (run_grade)."""
import json
import time

import pytest

from grader.catalog import load_catalog
from tests.conftest import grade_here, grade_json, run_grade

SOLUTION_1 = load_catalog().get(1).solution_path


def test_unknown_exercise_is_a_usage_error():
    proc = run_grade("exercise", "42", SOLUTION_1)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "unknown exercise '42'" in proc.stderr and "self_attention" in proc.stderr


def test_missing_file_is_a_usage_error(tmp_path):
    proc = run_grade("exercise", "1", tmp_path / "nope.py")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"grade: no such file: {tmp_path / 'nope.py'}"


def test_outside_a_workspace_says_how_to_make_one(tmp_path):
    proc = run_grade("exercise", "3", cwd=tmp_path)
    assert proc.returncode == 2
    assert "grade init" in proc.stderr and proc.stderr.count("\n") == 1


def test_syntax_error_names_the_line(write):
    path = write("broken.py", "import torch\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n    return (q @ k\n")
    code, doc = grade_json("exercise", "2", path, here=True)
    assert code == 1
    assert doc["diagnoses"][0]["id"] == "syntax_error"
    assert "line 4" in doc["diagnoses"][0]["evidence"][0]
    assert doc["score"] == 0


def test_hanging_submission_times_out_quickly(write):
    path = write("hang.py", "import torch\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n    while True:\n        pass\n")
    start = time.monotonic()
    code, doc = grade_json("exercise", "2", path, "--timeout", "2", here=True)
    assert time.monotonic() - start < 15
    assert code == 1
    assert doc["diagnoses"][0]["id"] == "timeout"
    assert any(t["status"] == "timeout" for t in doc["tests"])


# `--json` stays one line on the real process's stdout when the submission prints a verdict of its own, megabytes
# of it: test_adversarial grades e1_huge_output and e1_fake_verdict_stdout through the CLI (CLI_JOBS) and checks both.


def test_forbidden_api_is_refused_before_running(write):
    path = write("sdpa.py", "import torch.nn.functional as F\n\n"
                            "def scaled_dot_product_attention(query, key, value, mask=None):\n"
                            "    return F.scaled_dot_product_attention(query, key, value, attn_mask=None if mask is None else ~mask), None\n")
    code, doc = grade_json("exercise", "2", path, here=True)
    assert code == 1
    assert doc["diagnoses"][0]["id"] == "forbidden_api"
    assert all(t["status"] == "skipped" for t in doc["tests"] if t["category"] != "policy")


def test_json_document_shape():
    code, doc = grade_json("exercise", "self_attention", SOLUTION_1, here=True)
    assert code == 0
    for key in ("schema_version", "exercise", "slug", "passed", "score", "max_score", "tests", "diagnoses", "device", "duration_s"):
        assert key in doc
    assert doc["schema_version"] == 1 and doc["exercise"] == 1 and doc["device"] == "cpu"
    assert {t["status"] for t in doc["tests"]} <= {"passed", "failed", "error", "timeout", "skipped"}


def test_cuda_without_a_gpu_is_a_usage_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    proc = grade_here("exercise", "1", SOLUTION_1, "--device", "cuda")
    assert proc.returncode == 2 and "CUDA" in proc.stderr


def test_workspace_flow(tmp_path):
    ws = tmp_path / "ws"
    assert run_grade("init", ws).returncode == 0
    assert (ws / "exercises" / "01_self_attention.py").is_file()
    assert run_grade("init", ws).returncode == 2  # already a workspace

    listing = run_grade("list", cwd=ws)
    assert listing.returncode == 0 and "self_attention" in listing.stdout and "not started" in listing.stdout

    untouched = grade_here("exercise", "1", cwd=ws)
    assert untouched.returncode == 1
    assert "not started" in untouched.stdout and "Hint 1/3" in untouched.stdout

    first = run_grade("hint", "1", cwd=ws).stdout  # hint 1 was on the not-started screen
    second = run_grade("hint", "1", cwd=ws).stdout
    assert "Hint 2/3" in first and "Hint 3/3" in second
    assert "Hint 3/3" in run_grade("hint", "1", "--level", "3", cwd=ws).stdout

    gated = run_grade("solution", "1", cwd=ws)
    assert gated.returncode == 2 and "pass exercise 1 first" in gated.stderr
    assert "class SelfAttention" in run_grade("solution", "1", "--force", cwd=ws).stdout

    (ws / "exercises" / "01_self_attention.py").write_text(SOLUTION_1.read_text())
    assert grade_here("exercise", "1", cwd=ws).returncode == 0
    state = json.loads((ws / ".attention-kit.json").read_text())
    assert state["passed"] == [1]
    assert "passed" in run_grade("list", cwd=ws).stdout
    assert "class SelfAttention" in run_grade("solution", "1", cwd=ws).stdout

    assert run_grade("reset", "1", "--yes", cwd=ws).returncode == 0
    assert "raise NotImplementedError" in (ws / "exercises" / "01_self_attention.py").read_text()
    assert json.loads((ws / ".attention-kit.json").read_text())["passed"] == []


def test_grade_all_in_a_workspace(tmp_path):
    ws = tmp_path / "ws"
    run_grade("init", ws)
    (ws / "exercises" / "02_scaled_dot_product.py").write_text(load_catalog().get(2).solution_path.read_text())
    proc = grade_here("all", "--json", cwd=ws)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    passed = {r["exercise"]: r["passed"] for r in doc["results"]}
    assert passed == {e.number: e.number == 2 for e in load_catalog().exercises}


def test_module_entry_point_and_help():
    proc = run_grade("--help")
    assert proc.returncode == 0
    for command in ("exercise", "list", "init", "reset", "hint", "solution", "all"):
        assert command in proc.stdout


def test_explain_command(tmp_path):
    listing = run_grade("explain", "--list")
    assert listing.returncode == 0 and "scaling" in listing.stdout and "kv_cache" in listing.stdout
    out = tmp_path / "ex3.html"
    proc = grade_here("explain", "3", "--format", "html", "-o", out)
    assert proc.returncode == 0 and out.read_text().lstrip().lower().startswith("<!doctype html>")
    zh = grade_here("explain", "scaling", env={"LANG": "zh_CN.UTF-8", "LC_ALL": None, "LC_MESSAGES": None})
    assert zh.returncode == 0 and "缩放" in zh.stdout
    unknown = run_grade("explain", "no_such_topic")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1


def test_failing_verdict_points_to_explainers(write):
    path = write("nosc.py", load_catalog().get(2).solution_path.read_text().replace(" / math.sqrt(d_k)", ""))
    proc = grade_here("exercise", "2", path)
    assert proc.returncode == 1
    assert "grade explain 2" in proc.stdout and "scaling" in proc.stdout
    assert "no_scaling" in proc.stdout and "evidence:" in proc.stdout
