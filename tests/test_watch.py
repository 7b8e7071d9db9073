"""grade watch, end to end in a pseudo-terminal: a wrong save shows the diagnosis, a right one passes and moves on."""
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import termios
import time

import pytest

from grader.catalog import load_catalog
from tests.conftest import COMMAND, CORPUS, run_grade

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _controlling_tty():
    """Make the pty the child's controlling terminal, so Ctrl-C becomes SIGINT as in a real terminal, and
    let SIGINT through even when these tests run with it ignored (a background job of a script ignores it)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    def __init__(self, args, cwd):
        self.master, slave = pty.openpty()
        # PYTHONFAULTHANDLER: should the grader ever hang, SIGABRT makes it print every thread's stack (see exit_code)
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40", "PYTHONFAULTHANDLER": "1"}
        self.proc = subprocess.Popen(args, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
                                     start_new_session=True, preexec_fn=_controlling_tty)
        os.close(slave)
        self.text = ""
        self.raw = ""

    def wait_for(self, pattern: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pattern in self.text:
                return self.text
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(self.master, 65536).decode(errors="replace")
                    self.raw += chunk
                    self.text += ANSI.sub("", chunk)
                except OSError:
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


def test_watch_grades_each_save_and_moves_on(workspace):
    term = Terminal([*COMMAND, "watch"], cwd=workspace)
    target = workspace / "exercises" / "01_self_attention.py"
    try:
        term.wait_for("grading exercise 1", timeout=60)  # the grading state is visible
        term.wait_for("not started yet", timeout=60)
        term.wait_for("q quit")
        term.text = ""
        shutil.copyfile(CORPUS / "01" / "no_scaling.py", target)
        term.wait_for("(no_scaling)")
        term.text = ""
        shutil.copyfile(load_catalog().get(1).solution_path, target)
        term.wait_for("Exercise 1 · self_attention passed")
        term.wait_for("Press any key for exercise 2")  # a pass stays on screen until a key
        time.sleep(1.0)
        assert "exercise 2/" not in term.text
        term.press(" ")
        term.wait_for(f"exercise 2/{len(load_catalog().exercises)}")  # moved on to the next exercise
        term.wait_for("Hint 1/3:")  # shown by the not-started screen ...
        term.press("h")
        term.wait_for("Hint 2/3")  # ... so h goes on to the next one instead of repeating it
        term.press("h")
        term.wait_for("Hint 3/3")
        term.press("q")
        assert term.exit_code(10) == 0
        assert "progress is saved" in term.wait_for("progress is saved")
    finally:
        term.close()
    assert '"passed": [\n    1\n  ]' in (workspace / ".attention-kit.json").read_text()


def test_watch_honours_no_color_and_ctrl_c(workspace):
    (workspace / "exercises" / "02_scaled_dot_product.py").write_text(LOOP)
    env_cmd = ["env", "NO_COLOR=1", *COMMAND, "watch", "2", "--timeout", "600"]
    term = Terminal(env_cmd, cwd=workspace)
    try:
        term.wait_for("grading exercise 2", timeout=60)
        time.sleep(1.0)  # the submission is looping now
        term.press("\x03")  # Ctrl-C stops the running grade (and its worker) instead of waiting 600 s
        assert term.exit_code(20) == 0
        term.wait_for("progress is saved", timeout=5)
    finally:
        term.close()
    assert "grading exercise 2" in term.text
    params = {int(p) for sgr in re.findall(r"\x1b\[([0-9;]*)m", term.raw) for p in sgr.split(";") if p}
    colours = {p for p in params if 30 <= p <= 49 or 90 <= p <= 107}
    assert not colours, f"colour codes {sorted(colours)} despite NO_COLOR (bold is allowed)"


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
        term.wait_for("grading exercise 2")
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
