"""The OS boundary fails closed (issue 19, finding 3): Landlock carves the kit and a pack out of the
directories it allows, the grader refuses a tier that cannot keep the reference out of a worker's reach,
and the device requested, not the GPU on the host, decides the worker's view.

The weaker tiers are simulated in a driver process as tests/test_isolation.py does (root whose unshare(2)
fails: tier 2; uid 65534 without namespaces: tier 4), with the kit installed inside the interpreter's own
standard-library directory, a path the worker's allowlist must hold (the python:3.x images and `sudo pip
install` put it under /usr the same way).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from grader.sandbox import isolation, landlock, view
from tests.conftest import ROOT

needs_root_and_seccomp = pytest.mark.skipif(
    not (os.geteuid() == 0 and isolation.pyseccomp is not None and os.environ.get("ATTENTION_KIT_TIER_TESTS")),
    reason="simulating a weaker machine needs root and seccomp, and a copy of the kit in the standard library's "
           "directory: .ci/run sets ATTENTION_KIT_TIER_TESTS=1")

DRIVER = textwrap.dedent('''
    """Take privileges away as MODE says, then run ACTION: selfcheck, or the grade CLI with these arguments."""
    import errno, json, os, sys
    from pathlib import Path
    kit, mode, action = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.path.insert(0, kit)
    from grader.sandbox import isolation
    libc = isolation._libc()
    if mode.startswith("nobody"):
        # every closed directory on the way to Python, the venv and the kit opened (an empty tmpfs with the
        # entries on the way bound back), then uid 65534 for good
        isolation._ok(libc.unshare(isolation.CLONE_NEWNS), "unshare")
        isolation._ok(libc.mount(None, b"/", None, isolation.MS_REC | isolation.MS_PRIVATE, None), "private")
        needed = [os.path.realpath(sys.executable), sys.prefix, kit, *[p for p in sys.path if p]]
        closed = sorted({str(a) for p in needed for a in Path(p).parents if a.is_dir() and not os.stat(a).st_mode & 1})
        for path in closed:
            keep = os.path.join(os.environ["TMPDIR"], f".keep-{abs(hash(path))}")
            os.makedirs(keep, exist_ok=True)
            isolation._ok(libc.mount(path.encode(), keep.encode(), None, isolation.MS_BIND, None), "keep")
            isolation._ok(libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0, b"mode=0755"), "open up")
            for name in sorted(os.listdir(keep)):
                inside = os.path.join(path, name)
                if any(n == inside or n.startswith(inside + "/") for n in needed):
                    os.makedirs(inside, exist_ok=True)
                    isolation._ok(libc.mount(os.path.join(keep, name).encode(), inside.encode(), None,
                                             isolation.MS_BIND | isolation.MS_REC, None), "bind back")
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
    import pyseccomp
    f = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    f.add_rule(pyseccomp.ERRNO(errno.EPERM), "unshare")  # no namespaces: Docker's default, most containers
    if mode.endswith("no-landlock"):  # Linux before 5.13, or Landlock disabled
        f.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "landlock_create_ruleset")
    f.load()
    if action == ["selfcheck"]:
        from grader.sandbox.selfcheck import self_check
        print(json.dumps(self_check()))
    elif action[0] == "script":
        exec(action[1])
    else:
        from grader.cli import run
        code = run(action)
        print(json.dumps({"code": code}))
''')


@pytest.fixture(scope="module")
def kit_in_stdlib():
    """A copy of the kit (the package with its _kit, as a wheel installs it) in a new directory inside the
    standard library's directory, which every worker's allowlist holds; removed afterwards."""
    if not os.access(view.stdlib_dirs()[0], os.W_OK):
        pytest.skip("the standard library's directory is not writable here")
    where = Path(tempfile.mkdtemp(prefix="attention-kit-test-", dir=view.stdlib_dirs()[0]))
    try:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(ROOT / "grader", where / "grader", ignore=ignore)
        for name in ("exercises", "solutions", "templates"):
            shutil.copytree(ROOT / name, where / "grader" / "_kit" / name, ignore=ignore)
        for root, dirs, files in os.walk(where):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o755 if name in dirs else 0o644)
        os.chmod(where, 0o755)
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def drive(kit: Path, mode: str, *action: str) -> tuple[object, str]:
    """Run DRIVER from kit in mode; returns (its last line as JSON, its whole output)."""
    tmp = tempfile.mkdtemp(prefix="attention-kit-driver-")
    os.chmod(tmp, 0o1777)
    try:
        script = Path(tmp) / "driver.py"
        script.write_text(DRIVER)
        proc = subprocess.run([sys.executable, "-I", "-B", str(script), str(kit), mode, *action], capture_output=True,
                              text=True, timeout=240, cwd=tmp,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": tmp, "HOME": tmp,
                                   "OMP_NUM_THREADS": "1"})
        lines = proc.stdout.strip().splitlines()
        assert lines, proc.stderr[-3000:]
        return json.loads(lines[-1]), proc.stdout + proc.stderr
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@needs_root_and_seccomp
@pytest.mark.parametrize("mode", ["root-no-namespaces", "nobody-no-namespaces"])
def test_kit_inside_an_allowed_directory_stays_unreadable(kit_in_stdlib, mode):
    """Tiers 2 and 4 have no private root: Landlock alone must keep the reference and the suites of a kit
    installed under an allowed directory unreadable, and the worker must still import what it needs."""
    rows, out = drive(kit_in_stdlib, mode, "selfcheck")
    rows = dict(rows)
    assert rows["files"].startswith("shared file system") and rows["landlock"].startswith("Landlock"), rows
    probed = [k for k in rows if k.startswith(f"read {kit_in_stdlib}/")]
    assert any("_kit/solutions" in k for k in probed) and any("/suites/" in k for k in probed), rows
    assert not [k for k in rows if rows[k] == "ALLOWED" or rows[k].startswith("FOUND")], rows
    assert isolation.refusal(rows) == ""


@needs_root_and_seccomp
def test_a_tier_that_cannot_hide_the_reference_refuses_to_grade(kit_in_stdlib):
    """Tier 4 without Landlock: exit 4 and one line (why, the fix, the flag) before the file runs; with
    --allow-weak-sandbox the learner's own file is graded and the verdict says what was given up."""
    solution = kit_in_stdlib / "grader" / "_kit" / "solutions" / "02_scaled_dot_product.py"
    result, out = drive(kit_in_stdlib, "nobody-no-namespaces-no-landlock", "exercise", "2", str(solution), "--json")
    assert result == {"code": 4}, out
    refusal = [line for line in out.splitlines() if line.startswith("grade: refusing to grade")]
    assert len(refusal) == 1 and "Traceback" not in out, out
    assert "reference solutions" in refusal[0] and "Landlock" in refusal[0] and "--allow-weak-sandbox" in refusal[0]

    result, out = drive(kit_in_stdlib, "nobody-no-namespaces-no-landlock", "exercise", "2", str(solution), "--json",
                        "--allow-weak-sandbox")
    verdict = json.loads(out.splitlines()[0])
    assert result == {"code": 0} and verdict["passed"], out
    assert any(line.startswith("weaker sandbox accepted") for line in verdict["sandbox"]), verdict["sandbox"]


@needs_root_and_seccomp
def test_batch_refuses_a_weak_tier_and_has_no_flag_for_it(kit_in_stdlib, tmp_path):
    subs = tmp_path / "subs" / "alice"
    subs.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "02_scaled_dot_product.py", subs)
    os.chmod(tmp_path, 0o755)
    for p in (tmp_path / "subs", subs, subs / "02_scaled_dot_product.py"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    result, out = drive(kit_in_stdlib, "nobody-no-namespaces-no-landlock", "batch", str(tmp_path / "subs"),
                        "--exercises", "2", "--quiet")
    assert result == {"code": 4}, out
    assert "grade: refusing to grade" in out and "--allow-weak-sandbox" not in out and "Traceback" not in out, out
    result, out = drive(kit_in_stdlib, "nobody-no-namespaces-no-landlock", "batch", str(tmp_path / "subs"),
                        "--allow-weak-sandbox")
    assert result == {"code": 2} and "No such option" in out, out


SIGIO = textwrap.dedent('''
    import subprocess, time
    from grader.sandbox import Limits, Sandbox
    victim = subprocess.Popen(["sleep", "30"])  # the grader's uid, like the grader and other workers here
    probe = os.path.join(os.environ["TMPDIR"], "sigio.py")
    with open(probe, "w") as f:
        # seccomp's allowlist refuses pipe2 and F_SETOWN/F_SETSIG before Landlock is asked: both layers hold
        f.write("import fcntl, os, signal\\ntry:\\n    r, w = os.pipe()\\n"
                f"    fcntl.fcntl(r, fcntl.F_SETOWN, {victim.pid})\\n"
                "    fcntl.fcntl(r, 10, signal.SIGKILL)\\n"  # F_SETSIG
                "    fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)\\n    os.write(w, b'x')\\n"
                "except PermissionError:\\n    pass\\n")
    with Sandbox(probe, limits=Limits(time_s=20)) as sb:
        sb.request({"op": "load"})
        time.sleep(0.3)
        scoped = sb.state["scoped"]
    print(json.dumps({"scoped": scoped, "victim": victim.poll()}))
    victim.kill()
''')


@needs_root_and_seccomp
@pytest.mark.skipif(landlock.NR is None, reason="no Landlock system call numbers here")
def test_landlock_scoping_keeps_a_same_uid_worker_from_signalling_others(kit_in_stdlib):
    """Tier 4: the worker shares the grader's uid; F_SETOWN + F_SETSIG(SIGKILL) on a pipe asks the kernel to
    kill another process of that uid. Landlock's signal scoping (ABI 6) refuses it."""
    if landlock_abi() < 6:
        pytest.skip("Landlock scoping needs ABI 6 (Linux 6.12)")
    result, out = drive(kit_in_stdlib, "nobody-no-namespaces", "script", SIGIO)
    assert result["scoped"].startswith("Landlock scoping") and result["victim"] is None, out


# -- the device decides the view -----------------------------------------------------------------

BOOT = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from grader.sandbox import isolation
    from grader.sandbox.limits import Limits
    isolation.gpu_devices = lambda: ["nvidia0"]  # a GPU machine
    print(json.dumps(isolation.after_boot(Limits(device=sys.argv[2]))))
''')


def boot_state(device: str) -> dict:
    """What after_boot holds on a GPU machine for a grade on device, in a process of its own."""
    with tempfile.TemporaryDirectory(prefix="attention-kit-boot-") as tmp:
        proc = subprocess.run([sys.executable, "-I", "-c", BOOT, str(ROOT), device], cwd=tmp, capture_output=True,
                              text=True, timeout=60, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(os.geteuid() != 0, reason="the private root needs root here")
def test_a_gpu_on_the_host_does_not_weaken_a_cpu_grade():
    cpu = boot_state("cpu")
    assert cpu["files"].startswith("private root") and cpu["landlock"].startswith("Landlock"), cpu
    assert isolation.given_up(cpu) == [] and isolation.refusal(cpu) == ""
    cuda = boot_state("cuda")
    assert cuda["files"].startswith("kit directories covered") and isolation.CUDA_VIEW in cuda["files"], cuda
    assert cuda["landlock"].startswith("no Landlock: a CUDA grade"), cuda
    assert [line.split(":")[0] for line in isolation.given_up(cuda)] == ["files", "landlock"]
    assert isolation.refusal(cuda) == ""  # own uid and the kit covered: a CUDA grade is allowed, and says so


def test_landlock_scoping_is_recorded_where_the_kernel_has_it():
    state = boot_state("cpu")
    abi = landlock_abi()
    if abi >= 6:
        assert state["scoped"].startswith(f"Landlock scoping (ABI {abi})"), state
    else:
        assert state["scoped"].startswith("no Landlock scoping"), state


def landlock_abi() -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, libc.syscall(landlock.NR[0], None, 0, 1)) if landlock.NR else 0


# -- the pieces ------------------------------------------------------------------------------------

def test_readable_grants_every_entry_around_a_hole(tmp_path):
    (tmp_path / "lib" / "python3" / "site-packages" / "grader").mkdir(parents=True)
    (tmp_path / "lib" / "python3" / "os.py").write_text("")
    (tmp_path / "lib" / "libpython.so").write_text("")
    (tmp_path / "lib" / "link").symlink_to(tmp_path / "lib" / "python3")
    (tmp_path / "bin").mkdir()
    (tmp_path / "share" / "pack").mkdir(parents=True)
    (tmp_path / "share" / "doc").mkdir()
    holes = [str(tmp_path / "lib" / "python3" / "site-packages"), str(tmp_path / "share" / "pack")]
    got = sorted(os.path.relpath(p, tmp_path) for p in view.readable(str(tmp_path), holes))
    assert got == ["bin", "lib/libpython.so", "lib/python3/os.py", "share/doc"]
    assert view.readable(str(tmp_path / "bin"), holes) == [str(tmp_path / "bin")]


def test_closed_to_others_finds_a_closed_directory_on_the_way(monkeypatch):
    tmp = Path(tempfile.mkdtemp(prefix="attention-kit-closed-"))  # pytest's own lies in a closed directory here
    try:
        std, site = tmp / "home" / "lib" / "python3", tmp / "venv" / "site-packages"
        std.mkdir(parents=True)
        site.mkdir(parents=True)
        for p in (tmp, tmp / "home", tmp / "home" / "lib", std, tmp / "venv", site):
            os.chmod(p, 0o755)
        monkeypatch.setattr(view, "stdlib_dirs", lambda: [str(std)])
        monkeypatch.setattr(view, "_site_dirs", lambda: [str(site)])
        if any(not os.stat(p).st_mode & 0o001 for p in tmp.parents):
            pytest.skip("the temporary directory lies in a closed one")
        assert not view.closed_to_others()
        os.chmod(tmp / "home", 0o700)  # a Python under /root
        assert view.closed_to_others()
        os.chmod(tmp / "home", 0o755)
        os.chmod(site, 0o711)  # traversable but not listable: imports scan it
        assert view.closed_to_others()
    finally:
        shutil.rmtree(tmp)


@needs_root_and_seccomp
def test_a_pack_under_an_allowed_directory_is_emptied_and_carved_out(kit_in_stdlib):
    pack = str(kit_in_stdlib)  # not on this process's sys.path: hidden only because it is named
    std = view.stdlib_dirs()[0]
    _, _, empty = view.binds((pack,))
    assert pack in empty and pack not in view.binds()[2]
    granted = [p for p, rights in landlock.rules("/tmp/w", landlock._handled(1), (pack,)) if rights & landlock.READ_FILE]
    assert not [p for p in granted if p == pack or p.startswith(pack + "/")] and os.path.join(std, "os.py") in granted
    granted = [p for p, rights in landlock.rules("/tmp/w", landlock._handled(1)) if rights & landlock.READ_FILE]
    assert std in granted or pack in granted


@pytest.mark.parametrize("state, files, apart", [
    ({"files": "private root (pivot_root): …", "identity": "own uid/gid 1800000001, …"}, True, True),
    ({"files": "shared file system: …", "landlock": "Landlock (ABI 7): …", "identity": "own uid/gid 1800000001"},
     True, True),
    ({"files": "shared file system: …", "landlock": "no Landlock: ENOSYS", "identity": "own uid/gid 1800000001"},
     False, True),
    ({"files": "kit directories covered: /k (a CUDA grade: …)", "landlock": "no Landlock: a CUDA grade …",
      "identity": "own uid/gid 1800000001"}, True, True),
    ({"files": "kit directories covered: /k", "identity": "the grader's uid 1000, no capabilities (user namespace)"},
     False, True),
    ({"files": "shared file system: …", "landlock": "Landlock (ABI 5): …", "identity": "the grader's uid 1000 (not root, "
      "no user namespace)", "scoped": "no Landlock scoping: …", "syscalls": "no seccomp filter: …"}, True, False),
    ({"landlock": "Landlock (ABI 7): …", "identity": "the grader's uid 1000 (not root, no user namespace)",
      "scoped": "Landlock scoping (ABI 7): …", "syscalls": "no seccomp filter: …"}, True, True),
    ({"landlock": "Landlock (ABI 5): …", "identity": "uid/gid 65534 (nobody), shared with other workers",
      "scoped": "no Landlock scoping", "syscalls": "seccomp filter: …"}, True, True),
])
def test_refusal_names_what_does_not_hold(state, files, apart):
    assert isolation.files_kept(state) is files and isolation.kept_apart(state) is apart
    why = isolation.refusal(state)
    assert ("reference solutions" in why) is not files and ("signal the grader" in why) is not apart


# -- the same bytes score the same in every tier ---------------------------------------------------

LAZY = textwrap.dedent('''
    """Honest exercise 2 code whose torch calls import modules lazily on first use (sympy and mpmath through
    torch.broadcast_shapes' shape code) and a standard-library codec (cp1252, tenth session's red team: 1/24 in tier 2)."""
    import math

    LABEL = "attention ü".encode("cp1252")

    import torch


    def scaled_dot_product_attention(query, key, value, mask=None):
        batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
        scores = query.expand(*batch, *query.shape[-2:]) @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
        if mask is not None:
            torch.broadcast_shapes(mask.shape, scores.shape)
            scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ value, weights
''')


@needs_root_and_seccomp
@pytest.mark.parametrize("mode", ["root-no-namespaces", "nobody-no-namespaces"])
def test_lazily_imported_torch_modules_score_the_same_in_a_weaker_tier(kit_in_stdlib, mode):
    """Tiers 2 and 4 have no private root: what torch imports on an honest call's first use (sympy, mpmath and the
    standard library modules they import, under a Python in a directory closed to other users, as this pyenv under
    /root) is imported before the worker's uid changes, so the file scores full marks in every tier (3/17 before)."""
    where = Path(tempfile.mkdtemp(prefix="attention-kit-lazy-"))
    try:
        sub = where / "lazy.py"
        sub.write_text(LAZY)
        os.chmod(where, 0o777)
        os.chmod(sub, 0o666)
        result, out = drive(kit_in_stdlib, mode, "exercise", "2", str(sub), "--json")
    finally:
        shutil.rmtree(where, ignore_errors=True)
    verdict = json.loads(out.splitlines()[0])
    assert result == {"code": 0} and verdict["passed"] and verdict["score"] == verdict["max_score"], out[:4000]
