"""Every documented install path, end to end, from a non-editable install in a fresh venv (slow: minutes).

Skipped unless ATTENTION_KIT_INSTALL_TESTS=1 (CI sets it): a fresh venv gets torch and `pip install .`
as the README says; from there the instructor writes a handout, a Classroom template and a Gradescope
bundle; the handout's own README lines then install the kit, and the bundle's setup.sh runs on a
simulated /autograder tree (never the real one) and grades a submission.
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(os.environ.get("ATTENTION_KIT_INSTALL_TESTS") != "1",
                                reason="slow install tests: set ATTENTION_KIT_INSTALL_TESTS=1 (CI does)")
TORCH = "torch==2.13.0"  # the local CPU wheel; learners' READMEs say --index-url …/whl/cpu instead
TORCH_INDEX = os.environ.get("ATTENTION_KIT_TORCH_INDEX") or (  # a local index where there is one (offline)
    "file:///opt/pypi/simple" if Path("/opt/pypi/simple").is_dir() else "https://download.pytorch.org/whl/cpu")


def sh(*args, cwd=None, env=None, timeout=900, check=True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"{args}: {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


@pytest.fixture(scope="module")
def world():
    """A world-readable scratch folder (the sandbox's workers read the venv) with a fresh, non-editable install."""
    top = Path(tempfile.mkdtemp(prefix="attention-kit-install-"))
    top.chmod(0o755)
    venv = top / "venv"
    sh(sys.executable, "-m", "venv", venv)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "-q"]
    sh(*pip, TORCH)
    sh(*pip, ROOT)  # not editable: no checkout behind the installed kit
    sh("chmod", "-R", "a+rX", top)
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)
    yield top, venv, env
    shutil.rmtree(top, ignore_errors=True)


def test_the_install_has_no_checkout(world):
    top, venv, env = world
    where = sh(venv / "bin" / "python", "-c", "import grader, sys; print(grader.__file__)", cwd=top, env=env).stdout
    assert "site-packages" in where and not (Path(where).parents[1] / "pyproject.toml").exists()


def test_handout_readme_lines_install_the_kit(world):
    top, venv, env = world
    handout = top / "handout"
    sh("grade", "release", handout, "--exercises", "1,2", cwd=top, env=env)
    readme = (handout / "README.md").read_text()
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block[0] == "pip install torch --index-url https://download.pytorch.org/whl/cpu"
    kit_line = block[1]
    assert kit_line.startswith("pip install ./wheels/attention_kit-")
    sh(venv / "bin" / "python", "-m", "pip", "uninstall", "-y", "-q", "attention-kit", env=env)
    sh(venv / "bin" / "python", "-m", *shlex.split(kit_line), "-q", cwd=handout, env=env)  # as the README says
    sh("chmod", "-R", "a+rX", top)
    graded = sh("grade", "exercise", "1", "--json", cwd=handout, env=env, check=False)
    assert graded.returncode == 1 and json.loads(graded.stdout)["state"] == "not_started", graded.stderr
    solution = sh("grade", "solution", "1", "--force", cwd=handout, env=env).stdout
    (handout / "exercises" / "01_self_attention.py").write_text(solution)
    assert sh("grade", "exercise", "1", cwd=handout, env=env, check=False).returncode == 0


def test_classroom_template_installs_its_own_wheel(world):
    top, venv, env = world
    repo = top / "classroom"
    sh("grade", "classroom", repo, "--exercises", "2", cwd=top, env=env)
    steps = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())["jobs"]["run-autograding-tests"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install the grader")["run"].splitlines()
    assert "download.pytorch.org/whl/cpu" in install[0]
    spec = shlex.split(install[1])[-1]
    assert (repo / spec).is_file()
    with zipfile.ZipFile(repo / spec) as wheel:
        names = set(wheel.namelist())
    assert {"grader/cli/__init__.py", "grader/_kit/templates/classroom/classroom.yml"} <= names
    assert any(n.endswith(".dist-info/RECORD") for n in names) and any(n.endswith("entry_points.txt") for n in names)
    sh(venv / "bin" / "python", "-m", "pip", "install", "-q", "--dry-run", "--no-deps", repo / spec, env=env)


def test_gradescope_bundle_from_an_installed_kit_sets_up_and_grades(world):
    top, venv, env = world
    bundle = top / "autograder.zip"
    sh("grade", "gradescope", "build", bundle, "--exercises", "1", "--timeout", "30", "--torch", TORCH, cwd=top,
       env=env)
    root = top / "autograder"  # a simulated /autograder: source/ is the unzipped bundle
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
    plain = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    plain["PATH"] = os.pathsep.join(p for p in plain["PATH"].split(os.pathsep) if not p.startswith(str(Path(sys.executable).parent)))
    ag_env = {**plain, "AUTOGRADER_ROOT": str(root), "ATTENTION_KIT_TORCH_INDEX": TORCH_INDEX}
    before = os.stat(ROOT / "grader").st_mode
    sh("bash", root / "source" / "setup.sh", env=ag_env, timeout=1200)  # run from the checkout: it makes the
    assert os.stat(ROOT / "grader").st_mode == before  # installed kit private, never a grader/ folder where it runs
    assert (root / "kit-venv" / "bin" / "grade").is_file()
    (root / "submission").mkdir()
    (root / "submission" / "01_self_attention.py").write_text(
        sh(root / "kit-venv" / "bin" / "grade", "solution", "1", "--force", env=ag_env).stdout)
    sh(root / "source" / "run_autograder", env=ag_env, timeout=600)
    doc = json.loads((root / "results" / "results.json").read_text())
    assert [t["status"] for t in doc["tests"]] == ["passed"] and doc["score"] == doc["tests"][0]["max_score"] > 0
