"""The trusted side of the sandbox: starts a worker under limits, talks to it, and always ends it.

The worker gets its own process group, temporary directory, environment and resource limits.
Every request has a deadline taken from one wall-clock budget for the whole session, so a
submission that hangs costs that budget once; after that every request fails at once.
"""
from __future__ import annotations

import dataclasses
import json
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
from grader.sandbox.cputime import cpu_seconds
from grader.sandbox.isolation import WeakSandbox, isolate_child, protect_grader, reap, refusal
from grader.sandbox.limits import PACKAGE_PARENT, Limits, worker_env
from grader.sandbox.zygote import Zygote, ZygoteError
from grader.sandbox.textsafe import clean

LIVE: set["Sandbox"] = set()  # running sandboxes, so that cancel_all() can stop them from another thread
POLL_S = 0.1  # how often a waiting grader reads the worker's CPU time
STACK_WAIT_S = 0.5  # how long a timed-out worker's stack dump is waited for before the kill
BOOT_S = 90.0  # how long a worker may take to start (torch's import), on top of the submission's budget
BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from grader.sandbox.worker import main; main()"


class WorkerGone(Exception):
    """The worker cannot answer any more: it timed out, crashed or ran out of memory."""

    def __init__(self, reason: str, detail: str, line: int | None = None):
        super().__init__(detail)
        self.reason = reason  # "timeout" | "crash" | "memory_limit"
        self.detail = detail
        self.line = line  # where a timed-out submission was stuck (the worker's own stack: a hint, never a grade)


class SubmissionError(Exception):
    """The submission raised an exception inside the worker (reported, not re-raised there)."""

    def __init__(self, info: dict):
        self.type = clean(info.get("type", "Exception"), limit=80) or "Exception"
        self.message = clean(info.get("message", ""), limit=600)
        self.line = info.get("line") if isinstance(info.get("line"), int) else None
        self.not_implemented = info.get("not_implemented") is True
        self.memory = info.get("memory") is True
        operand = info.get("device_operand")  # the emulated device's refusal: was the CPU tensor a mask?
        self.device_operand = operand if operand in ("mask", "tensor") else None
        where = f" (line {self.line})" if self.line else ""
        super().__init__(f"{self.type}{where}: {self.message}" if self.message else f"{self.type}{where}")


class Sandbox:
    """One worker process for one submission file."""

    def __init__(self, submission: Path, *, source: str | None = None, limits: Limits = Limits(),
                 zygote: Zygote | None = None, forbidden: tuple[str, ...] = (), weak_ok: bool = False):
        """source: the text the policy checked (grader.source.read_submission); the worker compiles exactly it.
        Without it (the sandbox's own tests and self-check) the file is read as UTF-8."""
        self.submission = Path(submission)
        self.text = (self.submission.read_text(encoding="utf-8") if source is None else source).encode("utf-8")
        self.forbidden = list(forbidden)  # the exercise's forbidden APIs: the worker refuses them at run time
        if limits.cpu_s < limits.time_s + 30:  # RLIMIT_CPU counts the boot too: never the tighter bound
            limits = dataclasses.replace(limits, cpu_s=int(limits.time_s) + 30)
        self.limits = limits
        self.weak_ok = weak_ok  # grade even where isolation.refusal() objects (a learner's own files)
        self.state: dict[str, str] = {}  # what the worker's isolation held, as it reported before the submission ran
        self.zygote = zygote  # fork from this warm server when it runs; else spawn a fresh interpreter
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None
        self.gone: WorkerGone | None = None
        self.deadline = 0.0
        self.output = bytearray()
        self.output_total = 0
        self.starts = 0
        self.used = 0.0  # wall seconds the submission has spent answering requests
        self.cpu_used = 0.0  # CPU seconds it spent on them, read from outside the worker: what the budget counts
        self._cpu0 = self._last_cpu = 0.0
        self._by_cpu = True
        self.answered = 0
        self.cancelled = False
        self.ready = False  # the worker has booted (torch imported, isolated) and waits for requests
        self._began = 0.0
        self._tmp: str | None = None
        self.cgroup: WorkerCgroup | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "Sandbox":
        protect_grader()
        self.ready = False
        LIVE.add(self)
        self._tmp = tempfile.mkdtemp(prefix="attention-kit-")
        target = os.path.join(self._tmp, "submission.py")
        with open(target, "wb") as f:  # for tracebacks and line numbers; the worker compiles what load sends
            f.write(self.text)
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
                [sys.executable, "-I", "-B", "-c", BOOT, PACKAGE_PARENT, target, str(req_r), str(resp_w),
                 json.dumps(dataclasses.asdict(limits))],
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
        self._drainer = threading.Thread(target=self._drain, args=(self._stream,), daemon=True)
        self._drainer.start()
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
        LIVE.discard(self)
        if self.pid is not None:
            self._kill()
            self._drainer.join(timeout=1.0)  # what the worker printed before it ended is kept
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
            remove_tree(self._tmp)
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

    def _cpu(self) -> float:
        """The worker's CPU seconds so far (all its threads), read from /proc, never from the worker; where
        /proc cannot be read the wall clock stands in; once the worker is gone, its last reading."""
        if not self._by_cpu:
            return time.monotonic()
        seconds = cpu_seconds(self.pid)
        if seconds is not None:
            self._last_cpu = seconds
        return self._last_cpu

    def _check_budget(self) -> None:
        """Raise a timeout once the submission has used its CPU budget, or the wall-clock backstop is reached."""
        spent = self.cpu_used + self._cpu() - self._cpu0
        if spent > self.limits.time_s:
            raise self._stuck(self._timeout_message())
        if time.monotonic() > self.deadline:
            raise self._stuck(self._backstop_message(spent))

    def _stuck(self, detail: str) -> WorkerGone:
        """A timeout that says where the code was: the worker is asked for its stack (protocol.STACK_SIGNAL),
        read for a moment from the reply pipe, then killed."""
        line = self._stuck_line() if not self.cancelled else None
        gone = self._fail("timeout", f"{detail}; it was stuck at line {line}" if line else detail)
        gone.line = line
        return gone

    def _stuck_line(self) -> int | None:
        if not self.ready or self.pid is None:
            return None
        try:
            os.kill(self.pid, protocol.STACK_SIGNAL)
        except OSError:
            return None
        dump, wait = bytearray(), STACK_WAIT_S
        with selectors.DefaultSelector() as sel:
            sel.register(self._resp_r, selectors.EVENT_READ)
            while len(dump) < protocol.MAX_STACK and sel.select(wait):
                chunk = os.read(self._resp_r, protocol.MAX_STACK - len(dump))
                if not chunk:
                    break
                dump += chunk
                wait = 0.05  # the dump comes in one burst: a short silence ends it
        return protocol.stuck_line(bytes(dump), "submission.py", self.text.count(b"\n") + 1)

    def _wait(self, sel) -> None:
        """select() in short steps, checking the budget between them, until the pipe is ready."""
        while not sel.select(min(POLL_S, self.remaining())):
            self._check_budget()

    # -- requests --------------------------------------------------------------------------
    def request(self, header: dict, tensors: dict | None = None) -> tuple[dict, dict]:
        """Send one request; return the worker's (header, tensors). Raises WorkerGone or SubmissionError."""
        if header.get("op") == "load":
            header = {**header, "forbidden": self.forbidden}
            tensors = {**(tensors or {}), "source": _as_bytes_tensor(self.text)}
        reply, out = self._exchange(header, tensors, protocol.check_reply)
        self.answered += 1
        answer = _answer(reply, out)
        if isinstance(answer, SubmissionError):
            raise answer
        return answer

    def batch(self, calls: list[tuple[dict, dict | None]]) -> list[tuple[dict, dict] | SubmissionError]:
        """Several requests (header, tensors) in one frame, answered in one: per call, what request() returns or the
        SubmissionError it raises. The worker runs them in order and stops at the first that fails, so the list
        ends there. A tensor object that several calls send goes once (the worker gives each call its own copy).
        Raises WorkerGone as request() does: the batch's CPU time counts against the budget as a whole."""
        if not calls or any(header.get("op") not in protocol.BATCHED for header, _ in calls):
            raise ValueError(f"a batch holds one or more of {', '.join(protocol.BATCHED)}")
        keys, tensors, headers = {}, {}, []
        for header, own in calls:
            refs = {}
            for name, t in (own or {}).items():
                refs[name] = keys.setdefault(id(t), f"t{len(keys)}")
                tensors[refs[name]] = t
            headers.append({**header, "tensors": refs})
        reply, out = self._exchange({"op": "batch", "calls": headers}, tensors,
                                    lambda r: protocol.check_batch_reply(r, len(calls)))
        if reply.get("ok") is not True:  # the worker failed the batch as a whole: the first call's error
            self.answered += 1
            return [_answer(reply, out)]
        try:
            split = protocol.split_batch_tensors(out, len(reply["replies"]))
        except protocol.ProtocolError as exc:
            raise self._fail("crash", f"the worker sent an unreadable reply ({exc})") from None
        self.answered += len(split)
        return [_answer(sub, own) for sub, own in zip(reply["replies"], split)]

    def _exchange(self, header: dict, tensors: dict | None, check) -> tuple[dict, dict]:
        """One frame there and one back, within the budget; the reply decoded and checked by check()."""
        if self.gone is None and self.cancelled:
            raise self._fail("timeout", "cancelled")
        if self.gone is not None:
            raise self.gone
        data = protocol.encode(header, tensors)
        with selectors.DefaultSelector() as sel:
            if not self.ready:
                self._await_ready(sel)
            seconds = cpu_seconds(self.pid)  # read once: whether /proc can be read, and the budget's start
            self._by_cpu = seconds is not None
            self._last_cpu = seconds if self._by_cpu else self._last_cpu
            self._began = time.monotonic()
            self._cpu0 = seconds if self._by_cpu else self._began
            self.deadline = self._began + max(0.0, self.limits.backstop_s - self.used)
            try:
                self._send(sel, memoryview(data))
                frame = self._receive(sel)
            finally:
                self.used += time.monotonic() - self._began
                if self.gone is None:
                    self.cpu_used += self._cpu() - self._cpu0
            if self.cpu_used > self.limits.time_s:  # the reply came, but after the budget ran out: same verdict
                raise self._stuck(self._timeout_message())
        try:
            reply, out = protocol.decode(frame)
            check(reply)
        except protocol.ProtocolError as exc:
            raise self._fail("crash", f"the worker sent an unreadable reply ({exc})") from None
        return reply, out

    def _await_ready(self, sel) -> None:
        """Wait for the worker's 'booted' signal and what its isolation held, sent before the submission is
        imported; a tier that cannot keep the submission from the kit or the others is refused here."""
        sel.register(self._resp_r, selectors.EVENT_READ)
        try:
            if not sel.select(BOOT_S):
                raise self._fail("timeout", f"the worker did not start within {BOOT_S:g} s: this machine is overloaded "
                                            "(nothing of the submission had run yet); try again")
            if os.read(self._resp_r, 1) != protocol.READY:
                raise self._fail(*self._death())
        finally:
            sel.unregister(self._resp_r)
        self.deadline = time.monotonic() + BOOT_S
        try:
            self.state = protocol.check_state(protocol.decode(self._receive(sel))[0])
        except protocol.ProtocolError as exc:
            raise self._fail("crash", f"the worker sent an unreadable boot report ({exc})") from None
        weak = refusal(self.state)
        if weak and not self.weak_ok:
            self._fail("crash", "refused: a weak sandbox")
            raise WeakSandbox(f"refusing to grade: {weak}")
        self.ready = True

    def _send(self, sel, view: memoryview) -> None:
        sel.register(self._req_w, selectors.EVENT_WRITE)
        try:
            while view:
                self._wait(sel)
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
                self._wait(sel)
                chunk = os.read(self._resp_r, 1 << 20)
                if not chunk:
                    raise self._fail(*self._death())
                buf += chunk
        finally:
            sel.unregister(self._resp_r)

    def _timeout_message(self) -> str:
        """Tell a stuck call (an infinite loop, most likely) from code that is merely slow."""
        spent = (f"the submission used up its {self.limits.time_s:g} s of CPU time (its own computing, measured "
                 "outside the worker: the machine's load does not count; starting the worker is not counted) "
                 "and was stopped")
        current = max(0.0, self._cpu() - self._cpu0) if self.gone is None else 0.0
        if not self.answered:
            return f"{spent}: importing the file never finished, usually an infinite loop at the top level"
        earlier = self.cpu_used / self.answered
        if current > 10 * earlier + 0.5:
            return (f"{spent}: {self.answered} earlier calls took {earlier:.2f} s each, then one ran "
                    f"{current:.1f} s without returning, usually an infinite loop")
        return (f"{spent}: every call was slow ({self.answered} answered, {earlier:.2f} s of CPU each), so the code "
                f"is slow; if it is correct, allow more with --timeout {2 * self.limits.time_s:g}")

    def _backstop_message(self, spent: float) -> str:
        return (f"the submission ran {self.limits.backstop_s:g} s of wall-clock time (the backstop: "
                f"{self.limits.backstop:g} x its {self.limits.time_s:g} s CPU budget + 10 s) while computing for only {spent:.1f} s: "
                "it was waiting (a sleep, a blocked read), or this machine is badly overloaded; it was stopped")

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

    def cancel(self) -> None:
        """Stop the worker from another thread (watch: q, Ctrl-C, a newer save); every later request fails at once."""
        self.cancelled = True
        pid = self.pid
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _fail(self, reason: str, detail: str) -> WorkerGone:
        if self.cancelled:  # not a crash: no restart, no diagnosis
            reason, detail = "timeout", "grading was stopped before it finished"
        self._kill()
        self.gone = WorkerGone(reason, detail)
        return self.gone


def _answer(reply: dict, out: dict):
    """A checked reply: (header, tensors) when the call succeeded, else the SubmissionError it raised (request()
    raises it; batch() returns it in its place)."""
    if reply.get("ok") is True:
        return reply, out
    return SubmissionError(reply.get("error") if isinstance(reply.get("error"), dict) else {})


def _as_bytes_tensor(data: bytes):
    import torch

    return torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)


def remove_tree(top: str) -> None:
    """Remove a worker's directory whatever it left there: each directory is opened up (u+rwx) before it
    is read, so a mode-000 or 0o111 tree goes too; symlinks are removed, never followed; every step is
    relative to a descriptor of the directory above, so nothing outside top is touched."""
    parent, name = os.path.split(os.path.abspath(top))
    for _ in range(3):
        try:
            fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return
        try:
            _remove(fd, name)
        except (OSError, RecursionError):
            pass
        finally:
            os.close(fd)
        if not os.path.lexists(top):
            return
    shutil.rmtree(top, ignore_errors=True)


def _remove(parent_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=parent_fd)  # a file or a symlink (the link itself)
        return
    except FileNotFoundError:
        return
    except (IsADirectoryError, PermissionError):
        pass
    here = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY, dir_fd=parent_fd)
    try:
        os.chmod(f"/proc/self/fd/{here}", 0o700)  # the directory opened above, not whatever the name is now
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
    finally:
        os.close(here)
    try:
        for entry in os.listdir(fd):
            try:
                _remove(fd, entry)
            except OSError:
                pass  # the rest still goes; the caller tries again
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def cancel_all() -> None:
    for sandbox in list(LIVE):
        sandbox.cancel()
