"""The runtime layer on its own: workers started with grader.sandbox.Sandbox, no policy check at all.

Each probe is a submission that imports what it likes (os, socket, ctypes) and records what it
managed to do in result.json inside its own directory, which the test reads from outside. Every
probe runs on both spawn paths: a fresh interpreter and a fork of the warm zygote. What must hold
depends on the machine (see SECURITY.md): the strict checks apply where the grader is root (CI),
the rest everywhere. The last tests take the privileges away (no namespaces; a non-root grader)
and check that the worker degrades to what is documented instead of crashing.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
import torch

from grader.catalog import kit_dir
from grader.sandbox import Limits, Sandbox, SubmissionError
from grader.sandbox import isolation
from grader.sandbox.zygote import Zygote
from tests.conftest import ROOT

ROOTED = os.geteuid() == 0
SECCOMP = isolation.pyseccomp is not None
needs_root_and_seccomp_here = pytest.mark.skipif(not (ROOTED and SECCOMP and shutil.which("setpriv")),
                                                 reason="running as another user needs root, setpriv and seccomp")
PRELUDE = textwrap.dedent('''
    import ctypes, json, os, signal, socket, sys, time
    RESULT = {}

    def attempt(name, fn):
        try:
            RESULT[name] = ["allowed", repr(fn())[:300]]
        except BaseException as exc:
            RESULT[name] = [type(exc).__name__, str(exc)[:300]]

    def done():
        with open("result.json", "w") as f:
            json.dump(RESULT, f)
''')


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.fixture(scope="module")
def zygote():
    server = Zygote().start()
    yield server
    server.close()


@pytest.fixture(params=["spawn", "fork"])
def probe(request, tmp_path, zygote):
    """Run PRELUDE + body as a submission; returns (result dict, sandbox) with the worker still alive."""
    opened = []

    def _probe(body: str, **limits):
        path = tmp_path / "probe.py"
        path.write_text(PRELUDE + textwrap.dedent(body) + "\ndone()\n")
        sb = Sandbox(path, limits=Limits(**limits), zygote=zygote if request.param == "fork" else None).start()
        opened.append(sb)
        sb.request({"op": "load"})
        with open(os.path.join(sb._tmp, "result.json")) as f:
            return json.load(f), sb

    yield _probe
    for sb in opened:
        sb.close()


def refused(result: dict, *names: str) -> None:
    for name in names:
        assert result[name][0] != "allowed", f"{name} was allowed: {result[name]}"


def test_worker_cannot_signal_the_grader_or_other_processes(probe):
    victim = subprocess.Popen(["sleep", "60"])
    try:
        result, _ = probe(f'''
            attempt("grader", lambda: os.kill({os.getpid()}, 0))
            attempt("parent", lambda: os.kill(os.getppid(), 0))
            attempt("parent group", lambda: os.killpg(os.getpgid(os.getppid()), 0))
            attempt("every process", lambda: os.kill(-1, 0))
            attempt("victim", lambda: os.kill({victim.pid}, signal.SIGKILL))
            attempt("itself", lambda: os.kill(os.getpid(), 0))
        ''')
        time.sleep(0.1)
        assert alive(victim.pid), "the worker killed a process that is not its own"
        if ROOTED or SECCOMP:
            refused(result, "grader", "parent", "parent group", "every process", "victim")
        assert result["itself"][0] == "allowed"
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.skipif(not ROOTED, reason="a private mount namespace needs root (or a user namespace, tested below)")
def test_worker_cannot_read_the_kit(probe):
    secrets = [kit_dir("solutions") / "03_causal_attention.py", ROOT / "grader" / "harness.py",
               Path(isolation.PACKAGE_DIR) / "suites" / "test_numerics.py", ROOT / "tests" / "corpus"]
    result, _ = probe(f'''
        import importlib
        for path in {[str(p) for p in secrets]!r}:
            attempt(path, lambda: open(path).read(80) if os.path.isfile(path) else os.listdir(path))
        attempt("import the suites", lambda: importlib.import_module("grader.suites.conftest"))
        attempt("list the kit", lambda: os.listdir({str(ROOT)!r}))
        attempt("proc of the grader", lambda: os.listdir("/proc/{os.getpid()}/cwd"))
    ''')
    refused(result, *map(str, secrets), "import the suites", "proc of the grader")
    # A venv inside the clone (.venv/, the README's natural layout) is bound at its own path, so the clone's
    # folder exists in the worker's root; listing it may then show that venv's folder name and nothing else.
    venvs = {Path(p).relative_to(ROOT).parts[0] for p in sys.path
             if Path(p).is_relative_to(ROOT) and "site-packages" in Path(p).parts}
    listing = result["list the kit"]
    assert listing[0] != "allowed" or set(json.loads(listing[1].replace("'", '"'))) <= venvs, listing


def test_worker_cannot_write_outside_its_directory(probe, tmp_path):
    marker = f"attention-kit-isolation-{os.getpid()}-{time.monotonic_ns()}"
    targets = [ROOT / marker, Path(isolation.PACKAGE_DIR) / marker, Path(torch.__file__).parent / marker,
               Path(tempfile.gettempdir()) / marker, tmp_path / marker, Path("/dev/shm") / marker]
    try:
        result, sb = probe(f'''
            for path in {[str(t) for t in targets]!r}:
                attempt(path, lambda: open(path, "w").write("x"))
            attempt("own directory", lambda: open("mine.txt", "w").write("x"))
            attempt("remove own submission", lambda: os.remove("probe.py") if os.path.exists("probe.py") else None)
        ''')
        assert result["own directory"][0] == "allowed" and os.path.exists(os.path.join(sb._tmp, "mine.txt"))
        if ROOTED:
            refused(result, *map(str, targets))
            assert not [t for t in targets if t.exists()]
    finally:
        for t in targets:
            t.unlink(missing_ok=True)


def test_worker_has_no_network(probe, tmp_path):
    server = socket.socket(socket.AF_UNIX)
    address = str(tmp_path / "service.sock")  # a host service, such as a container runtime's socket
    server.bind(address)
    server.listen(1)
    os.chmod(tmp_path, 0o755)
    os.chmod(address, 0o777)
    try:
        result, _ = probe(f'''
            attempt("tcp", lambda: socket.create_connection(("1.1.1.1", 53), timeout=1))
            attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53)))
            attempt("unix", lambda: socket.socket(socket.AF_UNIX).connect({address!r}))
        ''')
        if ROOTED or SECCOMP:
            refused(result, "tcp", "udp", "unix")
    finally:
        server.close()


@pytest.mark.skipif(not SECCOMP, reason=f"libseccomp is not available: {isolation.SECCOMP_ERROR}")
def test_one_process_per_submission_threads_allowed(probe):
    """seccomp refuses fork, vfork, posix_spawn and non-thread clone, so limits per process are limits per
    submission (issue 13, item 7); threads still work, and the worker cannot leave its process group."""
    result, _ = probe('''
        import subprocess, threading
        attempt("fork", os.fork)
        attempt("posix_spawn", lambda: os.posix_spawn("/bin/true", ["true"], {}))
        attempt("subprocess", lambda: subprocess.run(["true"]))
        attempt("clone without CLONE_THREAD", lambda: ctypes.CDLL(None, use_errno=True).syscall(56, 17, 0, 0, 0, 0)
                and ctypes.get_errno())
        attempt("setsid", os.setsid)
        box = []
        t = threading.Thread(target=lambda: box.append(1))
        t.start()
        t.join()
        RESULT["thread"] = box
    ''')
    refused(result, "fork", "posix_spawn", "subprocess", "setsid")
    assert result["clone without CLONE_THREAD"] == ["allowed", str(1)]  # -1 from syscall(2), errno EPERM
    assert result["thread"] == [1]


def test_fork_bomb_is_refused_or_capped_and_reaped(probe):
    result, sb = probe('''
        children = []
        for _ in range(400):
            try:
                pid = os.fork()
            except OSError as exc:
                RESULT["refused"] = type(exc).__name__
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children.append(pid)
        RESULT["children"] = children
    ''')
    children = result["children"]
    if SECCOMP:
        assert children == [] and result["refused"] == "PermissionError"
    elif ROOTED:
        assert len(children) < Limits().processes and result["refused"] == "BlockingIOError"
    sb.close()
    time.sleep(0.3)
    assert not [pid for pid in children if alive(pid)]


@pytest.mark.skipif(not ROOTED, reason="only a root grader can give each worker a uid of its own")
def test_worker_runs_unprivileged_under_its_own_uid(probe):
    result, _ = probe('''
        libc = ctypes.CDLL(None, use_errno=True)
        RESULT["uid"] = [os.getuid(), os.geteuid(), os.getgid(), os.getgroups(), os.getpid()]
        RESULT["no_new_privs"] = libc.prctl(39, 0, 0, 0, 0)
        RESULT["dumpable"] = libc.prctl(3, 0, 0, 0, 0)
        attempt("become root", lambda: os.setuid(0))
        attempt("new user namespace", lambda: libc.unshare(0x10000000) or "ok")
        attempt("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) or "ok")
        attempt("chroot", lambda: os.chroot("/"))
    ''')
    uid, euid, gid, groups, pid = result["uid"]
    assert uid == euid == gid == isolation.worker_uid(pid) and groups == []
    assert result["no_new_privs"] == 1 and result["dumpable"] == 0
    refused(result, "become root", "chroot")
    # through ctypes a refusal is a -1 return, not an exception
    assert result["new user namespace"] == ["allowed", "-1"] and result["mount"] == ["allowed", "-1"]


@pytest.mark.skipif(not ROOTED, reason="reaping by uid needs root")
@pytest.mark.parametrize("way", ["kill as the uid", "scan /proc"])
def test_close_kills_whatever_runs_under_the_worker_uid(tmp_path, monkeypatch, way):
    """The grader's reap(): even a process outside the worker's group (started here, as the worker's
    uid, in a session of its own) is killed when the sandbox closes, by a thread with the worker's uid
    or, where that system call is unknown, by the /proc scan; the grader keeps its own ids."""
    if way == "scan /proc":
        monkeypatch.setattr(isolation, "SETRESUID", None)
    path = tmp_path / "idle.py"
    path.write_text("x = 1\n")
    sb = Sandbox(path).start()
    sb.request({"op": "load"})
    uid = isolation.worker_uid(sb.pid)
    stray = subprocess.Popen(["sleep", "60"], user=uid, group=uid, start_new_session=True)
    try:
        sb.close()
        stray.wait(timeout=5)
        assert stray.returncode == -signal.SIGKILL
        assert os.getresuid() == (0, 0, 0)
    finally:
        stray.kill()


SHM_BYTES = (1 << 30) + 7 * 4096  # a size no other segment on the machine has
KERNEL_ROUTES = ("F_SETOWN grader", "F_SETOWN parent", "F_SETSIG", "F_SETLEASE", "F_NOTIFY", "prlimit grader",
                 "prlimit parent", "setpriority parent", "setpriority user", "sched_setaffinity parent",
                 "SIGSTOP parent", "SIGSTOP everyone", "tkill parent", "pidfd_open parent", "ptrace parent",
                 "process_vm_readv", "inotify", "fanotify", "shmget 1 GB", "semget", "msgget", "mq_open",
                 "chmod other", "chmod own", "chown own", "mkdir 000", "execve", "socketpair", "TIOCSTI",
                 "personality", "unshare ipc")


def _shm_segments() -> list[list[str]]:
    try:
        with open("/proc/sysvipc/shm") as f:
            return [line.split() for line in f.readlines()[1:]]
    except FileNotFoundError:
        return []


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


@pytest.mark.skipif(not SECCOMP, reason=f"libseccomp is not available: {isolation.SECCOMP_ERROR}")
def test_worker_cannot_act_on_other_processes_or_leave_ipc_behind(probe, tmp_path, zygote):
    """Issue 19, class 2 and 4, with no static policy: the kernel routes to the grader, the fork server and
    other candidates (F_SETOWN/F_SETSIG, prlimit64, priority and affinity, signals, ptrace, inotify, chmod)
    and SysV/POSIX IPC all fail with EPERM (seccomp's allowlist); the same calls on itself still work; the
    grader and the fork server keep running, nothing is left behind, and the next grade is unaffected."""
    other = tmp_path / "attention-kit-other"  # another candidate's sandbox folder
    other.mkdir()
    os.chmod(other, 0o777)
    numbers = {name: isolation.pyseccomp.resolve_syscall(isolation.pyseccomp.Arch.NATIVE, name) for name in
               ("tkill", "pidfd_open", "ptrace", "process_vm_readv", "inotify_init1", "fanotify_init", "shmget",
                "semget", "msgget", "mq_open", "personality", "unshare")}
    segments = len(_shm_segments())
    result, _ = probe(f"""
        import fcntl, resource, termios
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        NR = {numbers!r}

        def raw(name, *args):
            out = libc.syscall(NR[name], *args)
            if out == -1:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            return out

        grader, parent = {os.getpid()}, os.getppid()
        own = os.open("lease.txt", os.O_CREAT | os.O_RDONLY, 0o600)
        attempt("F_SETOWN grader", lambda: fcntl.fcntl(1, fcntl.F_SETOWN, grader))
        attempt("F_SETOWN parent", lambda: fcntl.fcntl(1, fcntl.F_SETOWN, parent))
        attempt("F_SETSIG", lambda: fcntl.fcntl(1, fcntl.F_SETSIG, signal.SIGKILL))
        attempt("F_SETLEASE", lambda: fcntl.fcntl(own, fcntl.F_SETLEASE, fcntl.F_RDLCK))
        attempt("F_NOTIFY", lambda: fcntl.fcntl(os.open(".", os.O_RDONLY), fcntl.F_NOTIFY, fcntl.DN_CREATE))
        attempt("prlimit grader", lambda: resource.prlimit(grader, resource.RLIMIT_CPU, (1, 1)))
        attempt("prlimit parent", lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE))
        attempt("setpriority parent", lambda: os.setpriority(os.PRIO_PROCESS, parent, 19))
        attempt("setpriority user", lambda: os.setpriority(os.PRIO_USER, 0, 19))
        attempt("sched_setaffinity parent", lambda: os.sched_setaffinity(parent, {{0}}))
        attempt("SIGSTOP parent", lambda: os.kill(parent, signal.SIGSTOP))
        attempt("SIGSTOP everyone", lambda: os.kill(-1, signal.SIGSTOP))
        attempt("tkill parent", lambda: raw("tkill", parent, 0))
        attempt("pidfd_open parent", lambda: raw("pidfd_open", parent, 0))
        attempt("ptrace parent", lambda: raw("ptrace", 16, parent, 0, 0))  # PTRACE_ATTACH
        attempt("process_vm_readv", lambda: raw("process_vm_readv", parent, 0, 0, 0, 0, 0))
        attempt("inotify", lambda: raw("inotify_init1", 0))
        attempt("fanotify", lambda: raw("fanotify_init", 0, 0))
        attempt("shmget 1 GB", lambda: raw("shmget", 0, {SHM_BYTES}, 0o1600))
        attempt("semget", lambda: raw("semget", 0, 1, 0o1600))
        attempt("msgget", lambda: raw("msgget", 0, 0o1600))
        attempt("mq_open", lambda: raw("mq_open", b"attention-kit-test", os.O_CREAT | os.O_RDWR, 0o600, None))
        attempt("chmod other", lambda: os.chmod({str(other)!r}, 0))
        attempt("chmod own", lambda: os.chmod(".", 0o777))
        attempt("chown own", lambda: os.chown(".", 0, 0))
        attempt("mkdir 000", lambda: os.mkdir("trap", 0))
        attempt("execve", lambda: os.execv("/bin/true", ["true"]))
        attempt("socketpair", lambda: socket.socketpair())
        attempt("TIOCSTI", lambda: fcntl.ioctl(0, termios.TIOCSTI, b"x"))
        attempt("personality", lambda: raw("personality", 0xFFFFFFFF))
        attempt("unshare ipc", lambda: raw("unshare", 0x08000000))
        # on itself, and harmless commands: allowed
        attempt("F_GETFL", lambda: fcntl.fcntl(1, fcntl.F_GETFL))
        attempt("prlimit self", lambda: resource.prlimit(0, resource.RLIMIT_NOFILE))
        attempt("getpriority self", lambda: os.getpriority(os.PRIO_PROCESS, 0))
        attempt("sched_getaffinity self", lambda: sorted(os.sched_getaffinity(0)))
        attempt("TCGETS", lambda: fcntl.ioctl(1, termios.TCGETS, bytes(64)))
        attempt("signal itself", lambda: os.kill(os.getpid(), 0))
    """)
    wrong = {k: result[k] for k in KERNEL_ROUTES if result[k][0] != "PermissionError"}
    assert not wrong, f"not refused with EPERM: {wrong}"
    for name in ("F_GETFL", "prlimit self", "getpriority self", "sched_getaffinity self", "signal itself"):
        assert result[name][0] == "allowed", (name, result[name])
    assert result["TCGETS"][0] == "OSError" and "ioctl" in result["TCGETS"][1]  # ENOTTY on a pipe, not EPERM
    assert os.stat(other).st_mode & 0o777 == 0o777
    assert len(_shm_segments()) == segments and not [s for s in _shm_segments() if s[3] == str(SHM_BYTES)]
    assert zygote.alive and _state(zygote.proc.pid) != "T"
    after, _ = probe("RESULT['next'] = os.getpid()")  # the next grade, from the same fork server
    assert after["next"] > 0 and _state(zygote.proc.pid) != "T"


def _as_nobody(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run Python code as uid 65534, with the directories on the way to Python opened up (.ci/tier.py)."""
    return subprocess.run([sys.executable, str(ROOT / ".ci" / "tier.py"), "nobody", "--", sys.executable, "-I", "-c",
                           code], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "TMPDIR": str(cwd)})


@pytest.fixture
def shared_tmp():
    """A directory another user can work in (pytest's own are closed to other users)."""
    path = tempfile.mkdtemp(prefix="attention-kit-test-")
    os.chmod(path, 0o1777)
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


@needs_root_and_seccomp_here
def test_fork_server_is_not_dumpable(shared_tmp):
    """A worker sharing the fork server's uid (a non-root grader) can neither ptrace it nor open its
    /proc/<pid>/mem: the fork server makes itself non-dumpable, so the kernel hands its /proc files to root."""
    tmp_path = shared_tmp
    code = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from grader.sandbox.zygote import Zygote
        z = Zygote().start()
        try:
            mem = f"/proc/{{z.proc.pid}}/mem"
            for _ in range(600):
                if os.stat(mem).st_uid == 0:
                    break
                time.sleep(0.05)
            try:
                open(mem, "rb").close()
                opened = "opened"
            except PermissionError:
                opened = "refused"
            print(os.stat(mem).st_uid, opened, z.alive)
        finally:
            z.close()
    """)
    out = _as_nobody(code, tmp_path)
    assert out.stdout.split() == ["0", "refused", "True"], out.stdout + out.stderr[-2000:]


@needs_root_and_seccomp_here
def test_cleanup_removes_a_mode_000_tree_as_a_non_root_grader(shared_tmp):
    """What a worker without seccomp could leave in its folder (directories of mode 000 inside 0o111, a
    symlink out) goes with Sandbox.close's remove_tree even when the grader is not root; the symlink's
    target is untouched."""
    tmp_path = shared_tmp
    code = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from grader.sandbox.session import remove_tree
        base = {str(tmp_path)!r}
        outside = os.path.join(base, "outside")
        os.mkdir(outside)
        open(os.path.join(outside, "keep"), "w").close()
        os.chmod(outside, 0o500)
        top = os.path.join(base, "attention-kit-worker")
        os.makedirs(top + "/trap/inner/deeper")
        open(top + "/trap/inner/deeper/data", "w").close()
        os.symlink(outside, top + "/trap/out")
        for path, mode in (("trap/inner/deeper", 0), ("trap/inner", 0), ("trap", 0o111), ("", 0o111)):
            os.chmod(os.path.join(top, path), mode)
        remove_tree(top)
        print(os.path.lexists(top), oct(os.stat(outside).st_mode & 0o777), os.listdir(outside))
    """)
    out = _as_nobody(code, tmp_path)
    assert out.stdout.split() == ["False", "0o500", "['keep']"], out.stdout + out.stderr[-2000:]


def test_self_check_reports_what_holds():
    from grader.sandbox import view
    from grader.sandbox.selfcheck import self_check

    rows = dict(self_check())
    reads = [k for k in rows if k.startswith("read ")]
    attempts = reads + [k for k in rows if k.startswith(("write", "signal", "open", "leave", "start"))]
    assert len(attempts) == len(view.secret_files()) + 5 and len(reads) >= 3, rows
    if ROOTED:
        assert rows["files"].startswith("private root") and rows["identity"].startswith("own uid")
        assert rows["network"].startswith("own network namespace")
        assert not [k for k in attempts if rows[k] == "ALLOWED"], rows
    if SECCOMP:
        assert rows["syscalls"].startswith("seccomp filter")
        assert rows["signal the grader"] != "ALLOWED" and rows["open a socket"] != "ALLOWED"
        for what in ("fcntl F_SETOWN on its output pipe", "prlimit64 on the grader", "inotify_init1",
                     "shmget (SysV shared memory)", "mq_open (POSIX message queue)", "chmod its own directory"):
            assert rows[what].startswith("refused (PermissionError"), (what, rows[what])


# -- without the privileges: the documented fallbacks, and no crash -------------------------------

DRIVER = textwrap.dedent('''
    """Run the isolation self-check and grade a correct solution, after taking privileges away."""
    import ctypes, json, os, struct, sys
    sys.path.insert(0, sys.argv[1])
    from grader.sandbox import isolation, session

    mode = sys.argv[2]
    libc = isolation._libc()
    if mode.startswith("nobody"):
        # A private mount namespace in which every directory on the way to Python, the venv and the kit
        # can be traversed (a pyenv under /root may not be), then uid 65534 for good.
        isolation._ok(libc.unshare(isolation.CLONE_NEWNS), "unshare")
        isolation._ok(libc.mount(None, b"/", None, isolation.MS_REC | isolation.MS_PRIVATE, None), "private")
        needed = [os.path.realpath(sys.executable), sys.prefix, sys.argv[1], *[p for p in sys.path if p]]
        closed = sorted({a for p in needed for a in [os.path.dirname(p)] + [str(x) for x in __import__("pathlib").Path(p).parents]
                         if os.path.isdir(a) and not os.stat(a).st_mode & 0o001})
        for path in closed:
            keep = os.path.join(os.environ["TMPDIR"], f".keep-{abs(hash(path))}")
            os.makedirs(keep, exist_ok=True)
            isolation._ok(libc.mount(path.encode(), keep.encode(), None, isolation.MS_BIND, None), "keep")
            isolation._ok(libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0, b"mode=0755"), "open up")
            for name in sorted(os.listdir(keep)):
                if any(n == os.path.join(path, name) or n.startswith(os.path.join(path, name) + "/") for n in needed):
                    os.makedirs(os.path.join(path, name), exist_ok=True)
                    isolation._ok(libc.mount(os.path.join(keep, name).encode(), os.path.join(path, name).encode(),
                                             None, isolation.MS_BIND | isolation.MS_REC, None), "bind back")
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
    if mode.endswith("no-namespaces"):
        # what a container without namespaces looks like: unshare(2) fails with EPERM, in the worker too
        import errno, pyseccomp
        f = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        f.add_rule(pyseccomp.ERRNO(errno.EPERM), "unshare")
        f.load()
    from grader.sandbox.selfcheck import self_check
    rows = self_check()
    from grader.catalog import load_catalog
    from grader.runner import grade
    from grader.sandbox import Limits
    ex = load_catalog().get(2)
    verdict = grade(exercise=ex, path=ex.solution_path, limits=Limits(time_s=60))
    print(json.dumps({"rows": rows, "passed": verdict.passed, "uid": os.getuid()}))
''')


def _drive(mode: str) -> dict:
    tmp = tempfile.mkdtemp(prefix="attention-kit-driver-")
    os.chmod(tmp, 0o1777)
    try:
        script = Path(tmp) / "driver.py"
        script.write_text(DRIVER)
        proc = subprocess.run([sys.executable, "-I", str(script), str(ROOT), mode], capture_output=True, text=True,
                              timeout=300, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": tmp,
                                                "HOME": tmp, "OMP_NUM_THREADS": "1"})
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# Each drive is a fresh interpreter that grades after taking privileges away (~12 s of CPU): .ci/run's gated session
# runs them, beside its tier loop (the adversarial corpus in each of these tiers).
needs_root_and_seccomp = pytest.mark.skipif(
    not (ROOTED and SECCOMP and shutil.which("sleep") and os.environ.get("ATTENTION_KIT_TIER_TESTS")),
    reason="simulating a weaker machine needs root and seccomp, and runs in .ci/run (ATTENTION_KIT_TIER_TESTS=1)")


@needs_root_and_seccomp
def test_root_without_namespaces_degrades_to_uid_and_seccomp():
    out = _drive("root-no-namespaces")
    rows = dict(out["rows"])
    assert out["uid"] == 0
    assert rows["files"].startswith("shared file system") and rows["identity"].startswith("own uid")
    # Python's own directories must be readable by other users for this fallback (a pyenv under /root
    # is not): the worker then says so, and torch's lazy imports (sympy, for the meta device) fail.
    assert out["passed"] or "cannot read" in rows["identity"], rows
    for what in ("signal the grader", "open a socket", "leave its process group (setsid)", "start a process (fork)"):
        assert rows[what] != "ALLOWED", rows


@needs_root_and_seccomp
def test_non_root_grader_uses_a_user_namespace():
    out = _drive("nobody")
    rows = dict(out["rows"])
    assert out["passed"] and out["uid"] == 65534
    if rows["files"].startswith("private root"):  # unprivileged user namespaces are enabled here
        assert "user namespace" in rows["identity"] and rows["network"].startswith("own network namespace")
        assert not [k for k in rows if k.startswith("read ") and rows[k] == "ALLOWED"], rows
    else:  # they are not: the documented fallback, which the test below forces
        assert rows["files"].startswith("shared file system") and rows["identity"].startswith("the grader's uid"), rows
    for what in ("signal the grader", "open a socket", "leave its process group (setsid)", "start a process (fork)"):
        assert rows[what] != "ALLOWED", rows


@needs_root_and_seccomp
def test_non_root_grader_without_namespaces_still_grades():
    """The weakest case: the worker shares the grader's uid and file system; seccomp is what remains."""
    out = _drive("nobody-no-namespaces")
    rows = dict(out["rows"])
    assert out["passed"] and out["uid"] == 65534
    assert rows["files"].startswith("shared file system") and rows["identity"].startswith("the grader's uid")
    for what in ("signal the grader", "open a socket", "leave its process group (setsid)", "start a process (fork)"):
        assert rows[what] != "ALLOWED", rows


# -- every install mode: no copy of the kit is visible to a worker ------------------------------------

def _venv(where: Path) -> Path:
    """A venv whose site-packages reaches this one's torch through a .pth file (no reinstall)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next(where.glob("lib/python3*/site-packages"))
    (site / "zz_torch_from_test.pth").write_text(str(Path(torch.__file__).parents[1]) + "\n")
    return site


def _kit_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", ".git", ".venv", "*.pyc")
    for name in ("grader", "exercises", "solutions", "templates", "tests"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")


def _install(mode: str, base: Path) -> tuple[Path, list[Path]]:
    """Lay out an install as pip and hatchling do; returns (its python, the copies of the kit in it)."""
    meta_name = "attention_kit-0.1.0.dist-info"
    if mode == "clone-venv":  # a clone with its .venv inside, the kit installed editable from it
        clone = base / "clone"
        _kit_tree(clone)
        site = _venv(clone / ".venv")
        source, python = clone, clone / ".venv" / "bin" / "python"
    else:
        site = _venv(base / "venv")
        source, python = ROOT, base / "venv" / "bin" / "python"
    copies = [site / "grader"]
    kit = site / "grader" / "_kit"
    for name in ("exercises", "solutions", "templates"):  # what the wheel force-includes (an editable install too)
        shutil.copytree(ROOT / name, kit / name, ignore=shutil.ignore_patterns("__pycache__"))
    (site / meta_name).mkdir()
    (site / meta_name / "METADATA").write_text("Metadata-Version: 2.1\nName: attention-kit\nVersion: 0.1.0\n")
    if mode == "wheel":
        shutil.copytree(ROOT / "grader", site / "grader", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        (site / meta_name / "RECORD").write_text("grader/__init__.py,,\n")
    else:
        (site / "_editable_impl_attention_kit.pth").write_text(f"{source}\n")
        (site / meta_name / "direct_url.json").write_text(json.dumps({"url": f"file://{source}", "dir_info": {"editable": True}}))
        copies.append(source)
    for root, dirs, files in os.walk(base):  # workers drop to their own uid
        for name in dirs + files:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o005 | (0o001 if os.path.isdir(p) else 0))
    os.chmod(base, 0o755)
    return python, copies


@pytest.mark.skipif(os.environ.get("ATTENTION_KIT_INSTALL_TESTS") != "1",
                    reason="lays out three installs and self-checks each: .ci/run (ATTENTION_KIT_INSTALL_TESTS=1)")
@pytest.mark.parametrize("mode", ["wheel", "editable", "clone-venv"])
def test_no_copy_of_the_kit_is_visible_in_any_install_mode(mode):
    """The self-check (`python -m grader.sandbox`) finds every copy of the kit of the install it runs
    from, probes one file of each kind in each, and exits 1 if a worker can read any of them."""
    base = Path(tempfile.mkdtemp(prefix="attention-kit-install-"))
    try:
        python, copies = _install(mode, base)
        proc = subprocess.run([str(python), "-I", "-m", "grader.sandbox"], cwd=base, capture_output=True, text=True,
                              timeout=240, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base)})
        found = proc.stdout.splitlines()[0] if proc.stdout else ""
        for copy in copies:
            assert os.path.realpath(copy) in found, (copy, proc.stdout, proc.stderr[-2000:])
        probed = [line for line in proc.stdout.splitlines() if line.strip().startswith("read ")]
        assert any("_kit/solutions" in line for line in probed) and any("suites" in line for line in probed), proc.stdout
        if ROOTED:
            assert proc.returncode == 0 and "ALLOWED" not in proc.stdout, proc.stdout + proc.stderr[-2000:]
            assert "tier 1" in proc.stdout
        else:
            assert proc.returncode in (0, 1) and "tier " in proc.stdout, proc.stdout + proc.stderr[-2000:]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_trace_runs_under_the_forbidden_api_watch(tmp_path):
    """The trace request (feedback on where a value goes wrong) runs the submission under the same watch as a
    graded call: a forbidden call made there refuses the submission, as it would anywhere else."""
    path = tmp_path / "traced.py"
    path.write_text("import torch\n\n\ndef f(x):\n    return torch.softmax(x, dim=-1) * 2\n")
    sb = Sandbox(path, forbidden=["torch.softmax"]).start()
    try:
        sb.request({"op": "load"})
        with pytest.raises(SubmissionError) as info:
            sb.request({"op": "trace", "entry": "f", "args": ["x"]}, {"x": torch.randn(2, 3)})
        assert "forbidden_api" in info.value.message and "softmax" in info.value.message
    finally:
        sb.close()
    allowed = Sandbox(path).start()
    try:
        allowed.request({"op": "load"})
        reply, _ = allowed.request({"op": "trace", "entry": "f", "args": ["x"]}, {"x": torch.randn(2, 3)})
        assert reply["ok"] and reply["entries"]
    finally:
        allowed.close()
