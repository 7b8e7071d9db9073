"""The grader process trusts nothing it finds: no conftest.py, plugin or pytest config from around it,
a batch grades the bytes it hashed, and a candidate who breaks the fork server costs no one else's row."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from grader.catalog import load_catalog
from grader.instructor.batch import run_batch
from tests.conftest import CORPUS, ROOT

PLANTS = ("site", "package", "cwd", "ini", "entry_point", "env", "addopts")


def _plant(path: Path, marker: str, markers: Path) -> None:
    path.write_text(f"open({str(markers / marker)!r}, 'w').close()\n")


def _kit_with_plants(base: Path) -> tuple[Path, Path, Path]:
    """An installed-looking kit in base/site, with code planted above its suites, in the cwd (base) and as
    an entry-point plugin; each planted module leaves a file in base/markers when it is imported."""
    site, markers = base / "site", base / "markers"
    markers.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "grader", site / "grader", ignore=skip)
    for name in ("exercises", "solutions", "templates"):
        shutil.copytree(ROOT / name, site / "grader" / "_kit" / name, ignore=skip)
    _plant(site / "conftest.py", "site", markers)
    _plant(site / "grader" / "conftest.py", "package", markers)  # the folder right above grader/suites
    _plant(base / "conftest.py", "cwd", markers)
    (base / "pytest.ini").write_text("[pytest]\naddopts = -p planted_ini\n")
    for module, marker in (("planted_ini", "ini"), ("planted_ep", "entry_point"), ("planted_env", "env"),
                           ("planted_addopts", "addopts")):
        _plant(site / f"{module}.py", marker, markers)
    dist = site / "planted_ep-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-ep\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pytest11]\nplanted = planted_ep\n")
    submission = base / "sub" / "01_self_attention.py"
    submission.parent.mkdir()
    shutil.copy(ROOT / "solutions" / "01_self_attention.py", submission)
    for root, dirs, files in os.walk(base):  # workers drop to a uid of their own
        for name in dirs + files:
            p = os.path.join(root, name)
            os.chmod(p, os.stat(p).st_mode | 0o005 | (0o001 if os.path.isdir(p) else 0))
    os.chmod(base, 0o755)
    return site, markers, submission


GRADE_THEN_CONTROL = textwrap.dedent("""
    import json, os, sys
    site, markers, submission = sys.argv[1:4]
    sys.path.insert(0, site)
    import grader
    from pathlib import Path
    from grader.catalog import load_catalog
    from grader.runner import grade, max_score
    assert grader.__file__.startswith(site), grader.__file__
    ex = load_catalog().get(1)
    v = grade(exercise=ex, path=Path(submission))
    out = {"passed": v.passed, "score": v.score, "max": max_score(ex), "after_grade": sorted(os.listdir(markers))}
    import pytest
    pytest.main([os.path.join(site, "grader", "suites"), "--collect-only", "-q"])  # unpinned: the plants work
    out["control"] = sorted(os.listdir(markers))
    print("RESULT " + json.dumps(out))
""")


def test_no_conftest_plugin_or_config_found_around_the_grader_is_imported():
    base = Path(tempfile.mkdtemp(prefix="attention-kit-plants-"))
    try:
        site, markers, submission = _kit_with_plants(base)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base),
               "PYTEST_PLUGINS": "planted_env", "PYTEST_ADDOPTS": "-p planted_addopts"}
        proc = subprocess.run([sys.executable, "-I", "-c", GRADE_THEN_CONTROL, site, markers, submission], cwd=base,
                              env=env, capture_output=True, text=True, timeout=240)
        line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
        assert line, proc.stdout[-2000:] + proc.stderr[-3000:]
        out = json.loads(line.removeprefix("RESULT "))
        assert out["after_grade"] == [], out
        assert out["passed"] and out["score"] == out["max"] == 24, out  # the suites' own conftest still loads
        assert out["control"] == sorted(PLANTS), out
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- batch: the bytes hashed are the bytes graded ---------------------------------------------------------

def test_a_file_replaced_after_it_was_hashed_is_not_what_gets_graded(tmp_path, monkeypatch):
    from grader.instructor import batch

    ex1 = load_catalog().get(1)
    subs = tmp_path / "subs"
    (subs / "sam").mkdir(parents=True)
    original = subs / "sam" / ex1.file
    original.write_text((CORPUS / "01" / "no_scaling.py").read_text())
    real, graded = batch.grade_submission, []

    def swap_then_grade(**task):
        original.write_text(ex1.solution_path.read_text())  # after discovery and the digest, before the grade
        copy = Path(task["files"][1])
        graded.append((copy.is_relative_to(subs), stat.S_IMODE(copy.parent.stat().st_mode)))
        return real(**task)

    monkeypatch.setattr(batch, "grade_submission", swap_then_grade)
    args = dict(submissions_dir=subs, jobs=0, output=tmp_path / "gradebook.json", exercises="1", timeout=10,
                progress=False)
    first = run_batch(**args).rows[0].exercises[0]
    assert graded == [(False, 0o700)]  # a private copy, in a folder only the grader opens
    assert first.status == "failed" and first.diagnoses[0] == "no_scaling", first
    monkeypatch.setattr(batch, "grade_submission", real)
    again = run_batch(**args)  # the folder now holds the solution: not the bytes cached, so graded again
    assert (again.graded, again.cached) == (1, 0) and again.rows[0].exercises[0].status == "passed"
