"""`python -m grader.sandbox`: start a real worker with a probe that tries what a hostile submission
would, on this machine, and print what held and which tier that is (see SECURITY.md)."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from grader.pack import default_pack
from grader.sandbox import cgroup, view
from grader.sandbox.isolation import isolate_child, refusal
from grader.sandbox.limits import PACKAGE_PARENT, Limits, worker_env
from grader.sandbox.session import Sandbox

PROBE = r'''
import json, os, socket, sys
import torch
from grader.sandbox import isolation
report = {"state": isolation.STATE}
def attempt(name, fn):
    try:
        fn()
        report[name] = "ALLOWED"
    except BaseException as exc:
        report[name] = f"refused ({type(exc).__name__}: {exc})"[:160]
for path in SECRETS:
    attempt("read " + path, lambda: open(path).read(1))
attempt("write outside its directory", lambda: open(MARKER, "w").write("x"))
attempt("signal the grader", lambda: os.kill(os.getppid(), 0))
attempt("open a socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("1.1.1.1", 53)))
attempt("leave its process group (setsid)", lambda: os.setsid())
def fork_once():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
attempt("start a process (fork)", fork_once)
import ctypes, fcntl, resource
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def raw(name, *args):
    if isolation.pyseccomp is None:
        raise LookupError("not probed: no libseccomp to name the call")
    result = libc.syscall(isolation.pyseccomp.resolve_syscall(isolation.pyseccomp.Arch.NATIVE, name), *args)
    if result == -1:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result
attempt("fcntl F_SETOWN on its output pipe", lambda: fcntl.fcntl(1, fcntl.F_SETOWN, os.getppid()))
attempt("prlimit64 on the grader", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE))
attempt("inotify_init1", lambda: os.close(raw("inotify_init1", 0)))
attempt("shmget (SysV shared memory)", lambda: raw("shmctl", raw("shmget", 0, 4096, 0o1600), 0, None))  # IPC_RMID
attempt("mq_open (POSIX message queue)", lambda: (os.close(raw("mq_open", b"attention-kit-probe", os.O_CREAT | os.O_RDWR,
                                                                0o600, None)), raw("mq_unlink", b"attention-kit-probe")))
attempt("chmod its own directory", lambda: os.chmod(".", 0o700))
print("ISOLATION-REPORT " + json.dumps(report), flush=True)
'''


def self_check(secrets: list[str] | None = None) -> list[tuple[str, str]]:
    """Run the probe in a real worker; returns (what, result) rows. secrets: files the worker must not
    read (default: one of each kind in every copy of the kit found here)."""
    pack = default_pack()
    secrets = view.secret_files() + pack_files(pack) if secrets is None else secrets
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.py"
        marker = Path(tempfile.gettempdir()) / f"attention-kit-probe-{os.getpid()}"
        probe.write_text(f"SECRETS = {secrets!r}\nMARKER = {str(marker)!r}\n{PROBE}")
        with Sandbox(probe, limits=Limits(time_s=30, hidden=pack.hidden), weak_ok=True) as sb:  # reports, never refuses
            try:
                sb.request({"op": "load"})
            except Exception as exc:  # noqa: BLE001 - shown to the person running the check
                return [("probe", f"the probe failed: {exc}")]
            for _ in range(100):
                if "ISOLATION-REPORT" in sb.captured_output():
                    break
                time.sleep(0.02)
        text = sb.captured_output().split("ISOLATION-REPORT ", 1)[-1].splitlines()[0]
        wrote = marker.exists()
        marker.unlink(missing_ok=True)
    report = json.loads(text)
    rows = list(report.pop("state").items()) + list(report.items())
    if wrote:
        rows.append(("file written outside its directory", f"FOUND {marker}"))
    return rows


PREFLIGHT = ("import json, sys; sys.path.insert(0, sys.argv[1]); from grader.sandbox.isolation import after_boot; "
             "from grader.sandbox.limits import Limits; print(json.dumps(after_boot(Limits(**json.loads(sys.argv[2])))))")


def preflight(limits: Limits = Limits()) -> dict[str, str]:
    """What a worker's isolation holds here, from a process isolated as a worker is (isolate_child, then
    after_boot) but without torch: a tenth of a second, no submission. {} if it could not run."""
    with tempfile.TemporaryDirectory(prefix="attention-kit-preflight-") as tmp:
        os.chmod(tmp, 0o755)
        proc = subprocess.run([sys.executable, "-I", "-B", "-c", PREFLIGHT, PACKAGE_PARENT, json.dumps(asdict(limits))],
                              cwd=tmp, env=worker_env(tmp), capture_output=True, text=True, timeout=60,
                              preexec_fn=lambda: isolate_child(limits))
    try:
        state = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}
    return state if isinstance(state, dict) else {}


def pack_files(pack) -> list[str]:
    """One file of each kind of a pack (not the kit's: view.secret_files has those): reference, check, metadata."""
    if pack.builtin:
        return []
    found = [next(iter(sorted(folder.glob("*.py"))), None) for folder in (pack.solutions, pack.checks)]
    return [str(p) for p in [*found, pack.info] if p is not None and p.is_file()]


def tier(rows: dict) -> str:
    files = rows.get("files", "")
    if files.startswith("private root") and rows.get("identity", "").startswith("own uid"):
        name = "1: root with namespaces"
    elif rows.get("identity", "").startswith("own uid"):
        name = "2: root without namespaces (no CAP_SYS_ADMIN)"
    elif files.startswith("private root"):
        name = "3: not root, unprivileged user namespaces"
    else:
        name = "4: not root, no usable namespaces"
    limits = "cgroup v2" if rows.get("limits", "").startswith("cgroup v2") else \
        "seccomp, no fork" if rows.get("syscalls", "").startswith("seccomp") else "per-process rlimits only"
    return f"tier {name}; limits: {limits}"


def main() -> None:
    copies = view.kit_copies()
    print(f"running as uid {os.geteuid()} on {platform.machine()}; copies of the kit found: {', '.join(copies)}")
    ok, why = cgroup.available()
    print(f"  {'cgroup':<52} {why}")
    rows = self_check()
    for what, result in rows:
        print(f"  {what:<52} {result}")
    weak = refusal(dict(rows))
    print(f"  {'grading':<52} {'REFUSED: ' + weak if weak else 'allowed (the grader refuses nothing here)'}")
    allowed = [what for what, result in rows if result == "ALLOWED" or result.startswith("FOUND")]
    print(tier(dict(rows)))
    if allowed or weak:
        print(f"NOT ISOLATED here: {'; '.join(allowed + ([weak] if weak else []))} (see SECURITY.md for this tier)")
        sys.exit(1)
