"""grade gradescope build: a bundle per Gradescope's specification, run here on a simulated /autograder tree."""
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.catalog import load_catalog
from grader.instructor import gradescope
from grader.instructor.gradescope import results_document
from grader.instructor.grading import ExerciseResult
from tests.conftest import CORPUS, ROOT, run_grade

EX1, EX3 = load_catalog().get(1), load_catalog().get(3)
VENV_BIN = Path(sys.executable).parent


# The tests that build and set up a bundle (a wheel, ~17 s with the first autograder run) run in .ci/run's gated
# session beside the install tests, which set a bundle up from an installed kit in a simulated /autograder.
needs_bundle = pytest.mark.skipif(os.environ.get("ATTENTION_KIT_INSTALL_TESTS") != "1",
                                  reason="builds a Gradescope bundle: .ci/run (ATTENTION_KIT_INSTALL_TESTS=1)")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("gs") / "autograder.zip"
    proc = run_grade("gradescope", "build", out, "--exercises", "1,3", "--timeout", "20", "--source", ROOT,
                     timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


@needs_bundle
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
    from grader.instructor.kitwheel import built_torch

    pinned = re.findall(r'pip install --quiet "(torch[^"]*)"', setup)
    assert pinned == [f"torch=={built_torch()}"]  # the torch this kit runs with, not whatever is newest
    with zipfile.ZipFile(bundle) as z, zipfile.ZipFile(z.open(wheel_name)) as wheel:
        inside = set(wheel.namelist())
    assert {"grader/cli/__init__.py", "grader/instructor/gradescope.py", "grader/_kit/solutions/03_causal_attention.py",
            "grader/_kit/templates/gradescope/run_autograder"} <= inside


def _layout(tmp_path, bundle, submission: dict) -> Path:
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
    return root


def _autograder(tmp_path, bundle, submission: dict) -> Path:
    """The bundle's run_autograder on a /autograder look-alike; the results.json it wrote."""
    root = _layout(tmp_path, bundle, submission)
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


@needs_bundle
def test_run_autograder_writes_results_json(tmp_path, bundle):
    results = _autograder(tmp_path, bundle, {
        EX1.file: EX1.solution_path.read_text(),
        f"exercises/{EX3.file}": (CORPUS / "03" / "mask_inverted.py").read_text(),
        "notes.md": "not graded",
    })
    doc = json.loads(results.read_text())
    _check_spec(doc)
    ex1, ex3 = doc["tests"]  # one test per exercise, its checks inside
    assert ex1["name"].startswith("Exercise 1:") and ex3["name"].startswith("Exercise 3:")
    assert ex1["status"] == "passed" and ex1["score"] == ex1["max_score"] > 0 and "checks passed" in ex1["output"]
    assert ex3["status"] == "failed" and 0 < ex3["score"] < ex3["max_score"]
    assert "✗ masking" in ex3["output"] and "✓ " in ex3["output"] and "Most likely:" in ex3["output"]
    assert "mask is inverted" in doc["output"].lower() and "Hint:" in doc["output"]
    assert doc["extra_data"]["exercises"]["3"]["diagnoses"][0] == "mask_inverted"
    private = [results.parents[1] / "submission", *(results.parents[1] / "submission").rglob("*")]
    assert all(p.stat().st_mode & 0o077 == 0 for p in private)  # run_autograder: the submission is root's only


@needs_bundle
def test_a_missing_file_is_one_failed_test_worth_the_exercise(tmp_path, bundle):
    """The bundle's own grading step, run here on a /autograder look-alike (the test above runs the real script)."""
    root = _layout(tmp_path, bundle, {EX1.file: EX1.solution_path.read_text()})
    doc = json.loads(gradescope.run(root=root, config=root / "source" / "attention-kit.json").read_text())
    _check_spec(doc)
    (missing,) = [t for t in doc["tests"] if t["name"].startswith("Exercise 3:")]
    assert missing["status"] == "failed" and missing["score"] == 0 and missing["max_score"] > 0
    assert EX3.file in missing["output"]
    assert doc["score"] == sum(t["max_score"] for t in doc["tests"] if t["name"].startswith("Exercise 1:"))


@needs_bundle
def test_visibility_options_reach_results_json(tmp_path, bundle):
    result = ExerciseResult(1, "self_attention", "missing", 0, 24, note="no file")
    doc = results_document([result], visibility="after_due_date", stdout_visibility="visible", elapsed=2.0)
    assert doc["visibility"] == doc["tests"][0]["visibility"] == "after_due_date" and doc["stdout_visibility"] == "visible"
    with zipfile.ZipFile(bundle) as z:
        assert json.loads(z.read("attention-kit.json"))["stdout_visibility"] == "hidden"


HOSTILE = ("<img src=x onerror=alert(1)> [click me](http://evil.example/phish) "
           "![](http://evil.example/pixel.png) <a href='http://evil.example'>x</a> http://evil.example/bare "
           "\x1b[2J\x1b[32m passed 31/31 ``` `` `")


def test_submission_text_cannot_inject_markup_into_results_json():
    """Attack 8: exception text and folder names reach the Markdown output only as code."""
    from markdown_it import MarkdownIt

    folder = "<img src=x onerror=alert(2)>![t](http://evil.example/t.gif)"
    results = [
        ExerciseResult(1, "self_attention", "rejected", 0, 24, note=f"{folder}/{EX1.file}: {HOSTILE}", file=folder),
        ExerciseResult(3, "causal_attention", "error", 0, 30, note=f"internal grader error: ValueError: {HOSTILE}"),
        ExerciseResult(2, "scaled_dot_product", "failed", 1, 20, diagnoses=["mask_inverted"], verdict={
            "tests": [{"name": "t", "category": "masking", "status": "failed", "message": HOSTILE, "points": 2,
                       "score": 0, "line": 3}],
            "diagnoses": [{"title": "The mask is inverted", "explanation": "x", "hint": "y",
                           "evidence": [HOSTILE, f"in {folder}"]}]}),
    ]
    doc = results_document(results, visibility="visible", elapsed=1.0)
    html = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable("table").render(doc["output"])
    for bad in ("<img", "<a ", "<script", "\x1b"):
        assert bad not in html, (bad, html)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "http://evil.example/bare" in html
    outside_code = re.sub(r"<code[^>]*>.*?</code>", "", html, flags=re.S)
    assert "evil.example" not in outside_code and "onerror" not in outside_code  # no renderer can link it
    for t in doc["tests"]:
        assert "\x1b" not in t["output"] and t["output_format"] == "text"


@needs_bundle
def test_setup_sh_skips_interpreters_that_do_not_run(tmp_path, bundle):
    """A pyenv shim or stub found by `command -v` must not be chosen: the interpreter has to run."""
    with zipfile.ZipFile(bundle) as z:
        (tmp_path / "setup.sh").write_bytes(z.read("setup.sh"))
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name in ("python3.13", "python3.12"):
        (stubs / name).write_text("#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n")
        (stubs / name).chmod(0o755)
    (stubs / "python3.11").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{stubs}:/usr/bin:/bin", "AUTOGRADER_ROOT": str(tmp_path / "ag")}
    proc = subprocess.run(["bash", tmp_path / "setup.sh", "--print-python"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == str(stubs / "python3.11"), proc.stdout + proc.stderr
    assert not (tmp_path / "ag").exists()


KIT_PYTHON = """#!/bin/sh
case "$1 $2" in
  "-m pip") exit 0 ;;
  "-m grader.sandbox") echo "$FAKE_CHECK"; exit "${FAKE_CHECK_CODE:-0}" ;;
  "-I -c") echo "$FAKE_KIT" ;;
esac
"""
SYSTEM_PYTHON = """#!/bin/sh
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin" && cp "$KIT_PYTHON" "$3/bin/python" && printf '#!/bin/sh\\n' > "$3/bin/grade"
  chmod 700 "$3/bin/python" "$3/bin/grade"
fi
"""


def _stub(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@needs_bundle
def test_setup_sh_closes_the_package_the_wheel_and_the_pack_and_fails_without_the_sandbox(tmp_path, bundle):
    """setup.sh with stand-ins for apt-get, Python and the kit's venv: what it leaves readable, and when it fails."""
    root = _layout(tmp_path, bundle, {})
    (root / "source" / "pack" / "solutions").mkdir(parents=True)
    (root / "source" / "pack" / "solutions" / "01_self_attention.py").write_text("reference")
    kit = tmp_path / "site" / "grader"
    for rel in ("suites/test_api.py", "checks/mha.py", "_kit/solutions/01_self_attention.py", "cli.py"):
        (kit / rel).parent.mkdir(parents=True, exist_ok=True)
        (kit / rel).write_text("x = 1\n")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name in ("python3.13", "python3.12"):
        _stub(stubs / name, "#!/bin/sh\nexit 127\n")
    _stub(stubs / "python3.11", SYSTEM_PYTHON)
    _stub(stubs / "apt-get", "#!/bin/sh\nexit 0\n")
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "AUTOGRADER_ROOT": str(root), "FAKE_KIT": str(kit),
           "KIT_PYTHON": str(_stub(tmp_path / "kit-python", KIT_PYTHON)), "FAKE_CHECK": "tier 2: root without namespaces"}

    def setup(**extra) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", root / "source" / "setup.sh"], env={**env, **extra}, capture_output=True,
                              text=True, timeout=60)

    proc = setup()
    assert proc.returncode == 0, proc.stderr
    closed = [kit, *kit.rglob("*"), root / "source", *(root / "source").rglob("*")]  # the wheel and the pack too
    assert any(p.suffix == ".whl" for p in closed) and all(p.stat().st_mode & 0o077 == 0 for p in closed), \
        [oct(p.stat().st_mode) for p in closed]
    assert (root / "kit-venv" / "bin" / "python").stat().st_mode & 0o005 == 0o005  # the venv stays readable
    failed = setup(FAKE_CHECK="1 protection ALLOWED", FAKE_CHECK_CODE="1")
    assert failed.returncode != 0 and "self-check failed" in failed.stderr
    weaker = setup(FAKE_CHECK="tier 4: not root, no usable user namespaces", ATTENTION_KIT_SKIP_SELF_CHECK="1")
    assert weaker.returncode != 0 and "weaker than tier 2" in weaker.stderr


def test_build_usage_errors(tmp_path):
    proc = run_grade("gradescope", "build", tmp_path / "bundle.tar")
    assert proc.returncode == 2 and ".zip" in proc.stderr
    proc = run_grade("gradescope", "build", tmp_path / "b.zip", "--source", tmp_path)
    assert proc.returncode == 2 and "not a source checkout" in proc.stderr


def test_a_grader_failure_still_gives_gradescope_a_results_json(tmp_path):
    from grader.instructor.gradescope import run

    config = tmp_path / "attention-kit.json"
    config.write_text(json.dumps({"exercises": [99]}))  # an exercise this kit does not have
    doc = json.loads(run(root=tmp_path, config=config).read_text())
    assert doc["score"] == 0 and doc["tests"] == [] and "autograder itself failed" in doc["output"]
