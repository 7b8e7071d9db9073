"""The trusted side of the sandbox: starts a worker under limits, talks to it, and always ends it.

The worker gets its own process group, temporary directory, environment and resource limits.
Every request has a deadline taken from one wall-clock budget for the whole session, so a
submission that hangs costs that budget once; after that every request fails at once.
"""
from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader.sandbox import protocol
from grader.sandbox.cgroup import WorkerCgroup
from grader.sandbox.isolation import isolate_child, protect_grader, reap
from grader.sandbox.limits import PACKAGE_PARENT, Limits, worker_env
from grader.sandbox.zygote import Zygote, ZygoteError
from grader.textsafe import clean

BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from grader.sandbox.worker import main; main()"


class WorkerGone(Exception):
    """The worker cannot answer any more: it timed out, crashed or ran out of memory."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason  # "timeout" | "crash" | "memory_limit"
        self.detail = detail


class SubmissionError(Exception):
    """The submission raised an exception inside the worker (reported, not re-raised there)."""

    def __init__(self, info: dict):
        self.type = clean(info.get("type", "Exception"), limit=80) or "Exception"
        self.message = clean(info.get("message", ""), limit=600)
        self.line = info.get("line") if isinstance(info.get("line"), int) else None
        self.not_implemented = info.get("not_implemented") is True
        self.memory = info.get("memory") is True
        where = f" (line {self.line})" if self.line else ""
        super().__init__(f"{self.type}{where}: {self.message}" if self.message else f"{self.type}{where}")


class Sandbox:
    """One worker process for one submission file."""

    def __init__(self, submission: Path, *, limits: Limits = Limits(), zygote: Zygote | None = None,
                 forbidden: tuple[str, ...] = ()):
        self.submission = Path(submission)
        self.forbidden = list(forbidden)  # the exercise's forbidden APIs: the worker refuses them at run time
        self.limits = limits
        self.zygote = zygote  # fork from this warm server when it runs; else spawn a fresh interpreter
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None
        self.gone: WorkerGone | None = None
        self.deadline = 0.0
        self.output = bytearray()
        self.output_total = 0
        self.starts = 0
        self._tmp: str | None = None
        self.cgroup: WorkerCgroup | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "Sandbox":
        protect_grader()
        if not self.deadline:
            self.deadline = time.monotonic() + self.limits.wall_s
        self._tmp = tempfile.mkdtemp(prefix="attention-kit-")
        target = os.path.join(self._tmp, "submission.py")
        shutil.copyfile(self.submission, target)
        self.cgroup = WorkerCgroup(os.path.basename(self._tmp))
        limits = self.limits
        group = self.cgroup.path if self.cgroup.create(memory_mb=limits.memory_mb, processes=limits.processes,
                                                       cpus=limits.cpus) else None
        req_r, self._req_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        if self.zygote is not None and self.zygote.alive:
            out_r, out_w = os.pipe()
            try:
                self.pid = self.zygote.fork(submission=target, directory=self._tmp, limits=self.limits, cgroup=group,
                                            req_r=req_r, resp_w=resp_w, out_w=out_w)
            finally:
                for fd in (req_r, resp_w, out_w):
                    os.close(fd)
            self._stream = os.fdopen(out_r, "rb")
        else:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", BOOT, PACKAGE_PARENT, target, str(req_r), str(resp_w)],
                cwd=self._tmp, env=worker_env(self._tmp), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, pass_fds=(req_r, resp_w), start_new_session=True,
                preexec_fn=lambda: isolate_child(limits, group),
            )
            os.close(req_r)
            os.close(resp_w)
            self.pid = self.proc.pid
            self._stream = self.proc.stdout
        os.set_blocking(self._req_w, False)
        self.starts += 1
        self.gone = None
        threading.Thread(target=self._drain, args=(self._stream,), daemon=True).start()
        return self

    def _drain(self, stream) -> None:
        cap = self.limits.output_kb * 1024
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.output_total += len(chunk)
            if len(self.output) < cap:
                self.output += chunk[: cap - len(self.output)]

    def captured_output(self) -> str:
        text = clean(self.output)
        if self.output_total > len(self.output):
            text += f"\n[... {self.output_total - len(self.output)} more bytes of output not shown]"
        return text

    def close(self) -> None:
        if self.pid is not None:
            self._kill()
            for fd in (self._req_w, self._resp_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._stream.close()
            self.pid = self.proc = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        reap(self.pid)  # whatever still runs under the worker's own uid (root only)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def __enter__(self) -> "Sandbox":
        return self if self.pid is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    # -- requests --------------------------------------------------------------------------
    def request(self, header: dict, tensors: dict | None = None) -> tuple[dict, dict]:
        """Send one request; return the worker's (header, tensors). Raises WorkerGone or SubmissionError."""
        if self.gone is not None:
            raise self.gone
        if header.get("op") == "load" and self.forbidden:
            header = {**header, "forbidden": self.forbidden}
        data = protocol.encode(header, tensors)
        with selectors.DefaultSelector() as sel:
            self._send(sel, memoryview(data))
            frame = self._receive(sel)
        try:
            reply, out = protocol.decode(frame)
            protocol.check_reply(reply)
        except protocol.ProtocolError as exc:
            raise self._fail("crash", f"the worker sent an unreadable reply ({exc})") from None
        if reply.get("ok") is True:
            return reply, out
        raise SubmissionError(reply.get("error") if isinstance(reply.get("error"), dict) else {})

    def _send(self, sel, view: memoryview) -> None:
        sel.register(self._req_w, selectors.EVENT_WRITE)
        try:
            while view:
                if not sel.select(self.remaining()):
                    raise self._fail("timeout", self._timeout_message())
                try:
                    view = view[os.write(self._req_w, view) :]
                except BrokenPipeError:
                    raise self._fail(*self._death()) from None
        finally:
            sel.unregister(self._req_w)

    def _receive(self, sel) -> bytes:
        sel.register(self._resp_r, selectors.EVENT_READ)
        buf = bytearray()
        try:
            while True:
                try:
                    need = protocol.split_lengths(buf)
                except protocol.ProtocolError as exc:
                    raise self._fail("crash", f"the worker sent a malformed reply ({exc})") from None
                if need is not None and len(buf) >= need:
                    return bytes(buf[:need])
                if not sel.select(self.remaining()):
                    raise self._fail("timeout", self._timeout_message())
                chunk = os.read(self._resp_r, 1 << 20)
                if not chunk:
                    raise self._fail(*self._death())
                buf += chunk
        finally:
            sel.unregister(self._resp_r)

    def _timeout_message(self) -> str:
        return f"the submission was still running after the {self.limits.wall_s:g} s time limit and was stopped"

    def _exit_code(self) -> int | None:
        if self.proc is not None:
            try:
                return self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                return None
        try:
            return self.zygote.exit_status(self.pid)
        except ZygoteError:
            return None

    def _death(self) -> tuple[str, str]:
        code = self._exit_code()
        if code is None:
            return "crash", "the worker closed its reply channel and was stopped"
        if code == -signal.SIGXCPU:
            return "timeout", f"the submission used more than {self.limits.cpu_s} s of CPU time"
        if code == -signal.SIGKILL:
            return "crash", "the worker was killed (SIGKILL), by the system's out-of-memory killer or by the submission itself"
        if code == -signal.SIGXFSZ:
            return "crash", f"the submission wrote a file larger than {self.limits.file_mb} MB"
        if code < 0:
            return "crash", f"the worker died from signal {signal.Signals(-code).name}"
        return "crash", f"the submission ended the worker process (exit status {code})"

    def _fail(self, reason: str, detail: str) -> WorkerGone:
        self._kill()
        self.gone = WorkerGone(reason, detail)
        return self.gone
