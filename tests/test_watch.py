"""grade watch, end to end in a pseudo-terminal: a wrong save shows the diagnosis, a right one passes and moves on.

Each test starts the real CLI and grades in it (seconds each): they run from .ci/run with ATTENTION_KIT_WATCH_TESTS=1.
"""
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import termios
import time

import pytest

slow = pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_WATCH_TESTS"),
                                reason="real watch sessions in a pty take seconds each: .ci/run sets ATTENTION_KIT_WATCH_TESTS=1")

from grader.catalog import load_catalog
from tests.conftest import COMMAND, CORPUS, run_grade

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _controlling_tty():
    """Make the pty the child's controlling terminal, so Ctrl-C becomes SIGINT as in a real terminal, and
    let SIGINT through even when these tests run with it ignored (a background job of a script ignores it)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """The grader in a pty of a given size, its output also fed to a terminal emulator (pyte) whose screen the
    tests read as a person sees it; the emulator's history holds every line that scrolled off the top."""

    def __init__(self, args, cwd, columns=80, rows=24):
        import pyte

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        # PYTHONFAULTHANDLER: should the grader ever hang, SIGABRT makes it print every thread's stack (see exit_code)
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env.update(TERM="xterm-256color", PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen(args, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
                                     start_new_session=True, preexec_fn=_controlling_tty)
        os.close(slave)
        self.text = ""
        self.raw = ""
        self.screen = pyte.HistoryScreen(columns, rows, history=1000)
        self.stream = pyte.Stream(self.screen)

    def display(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def on_screen(self, pattern: str, timeout: float = 30.0) -> list[str]:
        """Wait until pattern is on the emulated screen (not merely somewhere in the output)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pattern in "\n".join(self.display()):
                return self.display()
            self.read(0.1)
        raise AssertionError(f"{pattern!r} never on the screen; it shows:\n" + "\n".join(self.display()))

    def resize(self, columns: int, rows: int) -> None:
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))  # the kernel sends SIGWINCH
        self.screen.resize(rows, columns)

    def read(self, wait: float) -> bool:
        if not select.select([self.master], [], [], wait)[0]:
            return True
        try:
            chunk = os.read(self.master, 65536).decode(errors="replace")
        except OSError:
            return False
        self.raw += chunk
        self.text += ANSI.sub("", chunk)
        self.stream.feed(chunk)
        return True

    def wait_for(self, pattern: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pattern in self.text:
                return self.text
            if not self.read(0.1):
                break
        raise AssertionError(f"{pattern!r} never appeared; screen so far:\n{self.text[-2000:]}")

    def press(self, key: str) -> None:
        os.write(self.master, key.encode())

    def exit_code(self, timeout: float) -> int:
        """The exit code once the grader has ended; if it has not within timeout, fail with its threads' stacks."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)
            try:
                self.wait_for("\x00never", timeout=3)
            except AssertionError:
                pass
            raise AssertionError(f"still running after {timeout} s; its screen and stacks:\n{self.text[-6000:]}") from None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        os.close(self.master)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    assert run_grade("init", ws).returncode == 0
    return ws


LOOP = "import torch\n\n\ndef scaled_dot_product_attention(query, key, value, mask=None):\n    while True:\n        pass\n"


@slow
def test_watch_is_one_screen_at_80x24_where_every_key_works(workspace):
    state = workspace / ".attention-kit.json"
    state.write_text(state.read_text().replace('"passed": []', '"passed": [4]'))  # n must skip a passed exercise
    term = Terminal([*COMMAND, "watch", "3"], cwd=workspace)
    target = workspace / "exercises" / "03_causal_attention.py"
    try:
        term.on_screen("○ not started", timeout=90)
        shutil.copyfile(CORPUS / "03" / "mask_inverted.py", target)
        screen = term.on_screen("✗ failing")
        assert screen[0].startswith("exercise 3/12 causal_attention · attempt 2 · ✗ failing")
        assert screen[1].startswith("✗ Exercise 3 · Causal self-attention with dropout")  # the verdict's header ...
        assert "(mask_inverted)" in "\n".join(screen[:6])  # ... and its diagnosis on the first screen
        assert screen[-1].startswith("h hint  e explain  d details  l list  n next")
        for key, shows in (("h", "Hint 2/3:"), ("l", "▸  3   causal_attention"), ("l", "(mask_inverted)"),
                           ("d", "Cause: The mask is inverted"), ("j", "↑ 1 line above"), ("\x1b[B", "↑ 2 lines above"),
                           ("z", "'z' does nothing here"), ("d", "(mask_inverted)")):
            term.press(key)
            screen = term.on_screen(shows)
            assert len(screen) == 24 and screen[0].startswith("exercise 3/12") and screen[-1].startswith("h hint")
        shutil.copyfile(load_catalog().get(3).solution_path, target)
        term.on_screen("✓ passed")
        assert "n or Enter: exercise 5 — Fix the naive multi-head attention" in term.on_screen("n or Enter")[-2]
        for key, shows in (("h", "Hint 3/3:"), ("l", "✓ passed")):
            term.press(key)  # none of them is taken for "any key": the exercise stays 3
            screen = term.on_screen(shows)
            assert screen[0].startswith("exercise 3/12")
        term.press("e")
        term.on_screen("Exercise 3: Causal self-attention")  # the explainers, in less
        term.press("q")  # leaves the pager, back to watch, still on exercise 3
        assert term.on_screen("n or Enter: exercise 5")[0].startswith("exercise 3/12")
        term.resize(100, 30)
        deadline = time.monotonic() + 10
        while not term.display()[29].startswith("h hint") and time.monotonic() < deadline:
            term.read(0.1)  # redrawn at the new size
        screen = term.display()
        assert len(screen) == 30 and screen[29].startswith("h hint") and screen[0].startswith("exercise 3/12")
        assert not term.screen.history.top, "lines scrolled off the top: the screen grew"
        term.press("\r")
        term.on_screen("exercise 5/12 fix_multihead")
        term.press("q")
        assert term.exit_code(10) == 0
        term.wait_for("progress is saved")
    finally:
        term.close()
    assert '"passed": [\n    3,\n    4\n  ]' in state.read_text()


@slow
def test_watch_honours_no_color_and_ctrl_c(workspace):
    (workspace / "exercises" / "02_scaled_dot_product.py").write_text(LOOP)
    env_cmd = ["env", "NO_COLOR=1", *COMMAND, "watch", "2", "--timeout", "600"]
    term = Terminal(env_cmd, cwd=workspace)
    try:
        term.wait_for("Grading exercise 2", timeout=60)
        time.sleep(1.0)  # the submission is looping now
        term.press("\x03")  # Ctrl-C stops the running grade (and its worker) instead of waiting 600 s
        assert term.exit_code(20) == 0
        term.wait_for("progress is saved", timeout=5)
    finally:
        term.close()
    assert "Grading exercise 2" in term.text
    params = {int(p) for sgr in re.findall(r"\x1b\[([0-9;]*)m", term.raw) for p in sgr.split(";") if p}
    colours = {p for p in params if 30 <= p <= 49 or 90 <= p <= 107}
    assert not colours, f"colour codes {sorted(colours)} despite NO_COLOR (bold is allowed)"


@slow
def test_watch_pages_explainers_and_q_stops_a_running_grade(workspace, tmp_path):
    pager = tmp_path / "pager.sh"
    pager.write_text("#!/bin/sh\necho PAGER-OPENED\ncat\n")
    pager.chmod(0o755)
    term = Terminal(["env", f"PAGER={pager}", *COMMAND, "watch", "2", "--timeout", "600"], cwd=workspace)
    try:
        term.wait_for("q quit", timeout=60)
        term.press("e")
        term.wait_for("PAGER-OPENED")  # the explainers go through $PAGER
        term.wait_for("√d_k")
        term.text = ""
        (workspace / "exercises" / "02_scaled_dot_product.py").write_text(LOOP)
        term.wait_for("⧗ grading…")
        time.sleep(1.0)
        term.press("q")
        assert term.exit_code(20) == 0  # not after the 600 s budget
        term.wait_for("progress is saved", timeout=5)
    finally:
        term.close()
    assert "progress is saved" in term.text


def test_ctrl_c_during_a_finalizer_still_stops_watching():
    """A KeyboardInterrupt raised inside __del__ is lost ("Exception ignored"); watch's flag is not."""
    import gc
    import threading

    from grader.watch import interrupt_flag

    assert threading.current_thread() is threading.main_thread()

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the signal is handled here, inside the finalizer
                pass

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # xdist workers, background jobs: SIG_IGN
    with interrupt_flag() as interrupted:
        obj = Finalized()
        obj.cycle = obj
        del obj
        gc.collect()
        deadline = time.monotonic() + 2
        while not interrupted.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
    restored = signal.signal(signal.SIGINT, before)
    assert interrupted.is_set()
    assert restored is signal.default_int_handler
