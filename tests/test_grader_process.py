"""The grader process trusts nothing it finds: no conftest.py, plugin or pytest config from around it,
a batch grades the bytes it hashed, and a candidate who breaks the fork server costs no one else's row."""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from grader.catalog import load_catalog
from grader.instructor import batch
from grader.instructor.batch import run_batch, run_pool
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


@pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_TIER_TESTS"),
                    reason="a planted copy of the kit graded in a fresh interpreter: .ci/run (ATTENTION_KIT_TIER_TESTS=1)")
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


# -- batch: a candidate who breaks the fork server costs no one else their row ---------------------------

def _wait_state(pid: int, state: str) -> None:
    from grader.sandbox.cputime import run_state

    deadline = time.monotonic() + 10
    while run_state(pid) != state and time.monotonic() < deadline:
        time.sleep(0.01)


def _drop_sent(fd: int) -> None:
    """Read away what a killed worker wrote to fd before it died, up to the end of the pipe (or 2 s of silence)."""
    import select

    while select.select([fd], [], [], 2)[0] and os.read(fd, 1 << 16):
        pass


@pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_TIER_TESTS"),
                    reason="grades a small cohort four times around a broken fork server: .ci/run sets "
                           "ATTENTION_KIT_TIER_TESTS=1")
def test_a_fork_server_broken_between_candidates_costs_no_one_their_row(tmp_path, monkeypatch):
    """Between two candidates the pool's fork server is killed, stopped or re-limited, or the next worker dies
    before the submission is imported (every later candidate 'ended the worker process (exit status 70)' before):
    each next row is still right, and a grade the grader could not run is an error, never cached."""
    from grader import runner
    from grader.sandbox.session import Sandbox

    ex1 = load_catalog().get(1)
    names = ("a_first", "b_reused", "c_killed", "d_stopped", "e_relimited", "f_boot_dies_once", "g_boot_dies_twice")
    for name in names:
        (tmp_path / "subs" / name).mkdir(parents=True)
        shutil.copy(ex1.solution_path, tmp_path / "subs" / name / ex1.file)
    monkeypatch.setattr(runner, "_GRADED", True)  # every grade forks from the fork server
    runner.keep_warm()
    servers, boot_kills = [], [0]

    def attack(name: str) -> None:
        pid = runner.keep_warm().proc.pid
        if name == "c_killed":
            os.kill(pid, signal.SIGKILL)
            _wait_state(pid, "Z")
        elif name == "d_stopped":
            os.kill(pid, signal.SIGSTOP)
            _wait_state(pid, "T")
        elif name == "e_relimited":
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (32, resource.prlimit(pid, resource.RLIMIT_NOFILE)[1]))
        boot_kills[0] = {"f_boot_dies_once": 1, "g_boot_dies_twice": 2}.get(name, 0)

    real_grade, real_ready = batch.grade_submission, Sandbox._await_ready

    def attack_then_grade(**task):
        attack(names[len(servers)])
        results = real_grade(**task)
        servers.append(runner._ZYGOTE.proc.pid if runner._ZYGOTE else None)
        return results

    def dies_before_boot(self, sel):
        if boot_kills[0]:
            boot_kills[0] -= 1
            os.kill(self.pid, signal.SIGKILL)
            _drop_sent(self._resp_r)  # a boot report sent before the kill landed (a loaded machine): it never booted
        return real_ready(self, sel)

    monkeypatch.setattr(batch, "grade_submission", attack_then_grade)
    monkeypatch.setattr(Sandbox, "_await_ready", dies_before_boot)
    result = run_batch(submissions_dir=tmp_path / "subs", jobs=0, output=tmp_path / "gradebook.json", exercises="1",
                       timeout=20, progress=False)
    rows = {r.submission: r.exercises[0] for r in result.rows}
    for name in names[:-1]:
        assert rows[name].status == "passed" and rows[name].score == rows[name].max_score, (name, rows[name])
    assert rows["g_boot_dies_twice"].status == "error" and "did not start" in rows["g_boot_dies_twice"].note
    cached = json.loads((tmp_path / "gradebook.cache.json").read_text())["rows"]
    assert sorted(cached) == sorted(names[:-1])
    assert servers[0] == servers[1] and len(set(servers[1:5])) == 4, servers  # kept while healthy, else replaced


def _relimits_its_process(task: dict) -> list[dict]:
    """A pool worker whose first task lowers its own process's file limit, as a hostile worker might."""
    batch.exit_if_tampered()
    if task["name"] == "poison":
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    return [{"number": 1, "status": "passed", "pid": os.getpid()}]


def test_a_pool_process_re_limited_by_one_task_does_not_grade_the_next():
    tasks = [{"name": n, "numbers": [1]} for n in ("poison", "next1", "next2")]
    got = {}
    run_pool(tasks, 1, lambda task, results: got.__setitem__(task["name"], results[0]), worker=_relimits_its_process,
             initializer=batch.record_vitals)
    assert all(got[n]["status"] == "passed" for n in ("poison", "next1", "next2")), got
    assert got["poison"]["pid"] not in (got["next1"]["pid"], got["next2"]["pid"])
