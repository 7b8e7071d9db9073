"""A fork server for sandbox workers: torch is imported once, each submission gets a fresh fork.

The zygote process holds no reference solution and no hidden test, and never runs submission
code itself. For each job the grader sends the submission's path, its private directory, limits
and three pipe ends (requests, replies, output) over a Unix socket; the zygote forks a child
that isolates itself exactly as a freshly spawned worker would (new session and process group,
resource limits, no network) and serves the requests. Batch grading and watch mode use it;
a single cold `grade exercise` spawns its worker directly, which is faster when nothing is warm.
"""
from __future__ import annotations

import gc
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict

from grader.sandbox import landlock, view
from grader.sandbox.isolation import PR_SET_DUMPABLE, PR_SET_PDEATHSIG, _libc, isolate_child
from grader.sandbox.limits import PACKAGE_PARENT, Limits, worker_env

BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from grader.sandbox.zygote import serve; serve()"
MAX_MESSAGE = 1 << 16


class ZygoteError(Exception):
    """The fork server is not available (it died or refused a job)."""


class Zygote:
    """The grader's handle on one fork server."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self._lock = threading.Lock()

    def start(self) -> "Zygote":
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", BOOT, PACKAGE_PARENT, str(theirs.fileno())],
            env=worker_env(os.getcwd()), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, pass_fds=(theirs.fileno(),), start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        theirs.close()
        self.sock = ours
        self._buf = b""
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _call(self, message: dict, fds: tuple[int, ...] = (), timeout: float = 60.0) -> dict:
        with self._lock:  # one request and its reply at a time: grades in two threads share this socket
            return self._exchange(message, fds, timeout)

    def _exchange(self, message: dict, fds: tuple[int, ...], timeout: float) -> dict:
        if not self.alive:
            raise ZygoteError("the fork server is not running")
        data = json.dumps(message).encode() + b"\n"
        self.sock.settimeout(timeout)
        try:
            socket.send_fds(self.sock, [data], list(fds)) if fds else self.sock.sendall(data)
            while b"\n" not in self._buf:
                chunk = self.sock.recv(MAX_MESSAGE)
                if not chunk:
                    raise ZygoteError("the fork server closed its socket")
                self._buf += chunk
        except OSError as exc:  # timeouts included
            raise ZygoteError(f"the fork server did not answer: {exc}") from None
        line, self._buf = self._buf.split(b"\n", 1)
        reply = json.loads(line)
        if "error" in reply:
            raise ZygoteError(reply["error"])
        return reply

    def fork(self, *, submission: str, directory: str, limits: Limits, req_r: int, resp_w: int, out_w: int,
             cgroup: str | None = None) -> int:
        """Start a worker for submission (a file inside directory), in cgroup (a directory, or None);
        returns its pid (= its process group)."""
        reply = self._call({"op": "fork", "submission": submission, "directory": directory, "limits": asdict(limits),
                            "cgroup": cgroup}, (req_r, resp_w, out_w))
        return int(reply["pid"])

    def exit_status(self, pid: int, timeout: float = 2.0) -> int | None:
        """The worker's wait status as a returncode (negative = killed by that signal), None if still running."""
        return self._call({"op": "status", "pid": pid, "timeout": timeout}, timeout=timeout + 5).get("code")

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def _die_with_parent() -> None:
    import ctypes

    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


# -- the fork server process ---------------------------------------------------------------------

def _reap(codes: dict[int, int], keep: int = 256) -> None:
    """Collect finished workers (no zombies pile up); remember recent exit codes for status requests."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if not pid:
            break
        codes[pid] = os.waitstatus_to_exitcode(status)
    while len(codes) > keep:
        codes.pop(next(iter(codes)))


def _status(pid: int, timeout: float, codes: dict[int, int]) -> int | None:
    deadline = time.monotonic() + timeout
    while pid not in codes:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            codes[pid] = os.waitstatus_to_exitcode(status)
        elif time.monotonic() > deadline:
            return None
        else:
            time.sleep(0.01)
    return codes.pop(pid)


def _child(message: dict, fds: list[int], sock: socket.socket) -> None:
    """In the forked worker: isolate, then serve. Never returns."""
    code = 0
    try:
        sock.close()
        req_r, resp_w, out_w = fds
        os.setsid()
        limits = Limits(**message["limits"])
        isolate_child(limits, message.get("cgroup"))
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        os.close(out_w)
        os.chdir(message["directory"])
        os.environ.update(HOME=message["directory"], TMPDIR=message["directory"])
        from grader.sandbox.worker import serve

        serve(message["submission"], req_r, resp_w, limits)
    except BaseException:  # anything here ends only this worker
        code = 70
    finally:
        os._exit(code)


def serve() -> None:
    from grader.sandbox.worker import boot, warm_up

    sock = socket.socket(fileno=int(sys.argv[1]))
    # not dumpable: a worker of the same uid can neither ptrace it nor open /proc/<zygote>/mem (its forks
    # inherit this; after_boot keeps it)
    _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    boot()
    warm_up()
    view.binds()  # the worker's file system view, worked out once for every fork
    gc.freeze()  # a worker's collections leave the inherited objects alone: their pages stay shared, not copied
    codes: dict[int, int] = {}
    buf = b""
    while True:
        _reap(codes)
        data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 3)
        if not data:
            return
        buf += data
        line, _, buf = buf.partition(b"\n")
        message = json.loads(line)
        if message["op"] == "fork":
            landlock.allowlist(tuple(message["limits"].get("hidden") or ()))  # once, for every later fork
            pid = os.fork()
            if pid == 0:
                _child(message, fds, sock)
            for fd in fds:
                os.close(fd)
            reply = {"pid": pid}
        elif message["op"] == "status":
            reply = {"code": _status(int(message["pid"]), float(message["timeout"]), codes)}
        else:
            reply = {"error": f"unknown op {message['op']!r}"}
        sock.sendall(json.dumps(reply).encode() + b"\n")
