"""Save-to-verdict latency of `grade watch`: from a save until the new verdict is drawn, in a real pty.

Usage: python bench/watch_latency.py [--saves 12] [--exercise 3] [--target 0.5]
Creates a workspace, starts `grade watch N` in an 80×24 pseudo-terminal of its own session, then
alternately saves two buggy versions of the exercise (from tests/corpus) and times each save until the
terminal, as emulated by pyte, shows the next attempt's status line with the new diagnosis: the screen a
person would see, not a string somewhere in the output. It reports the median and p90, the machine's load,
and the share of a CPU this process got while measuring (a busy loop's CPU time over its wall time, taken
before each save): on a loaded machine every process waits its turn, so the latency is also given divided by
that slowdown. Exits 1 when that load-adjusted median misses the target.
"""
from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import pyte

from grader.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
STATUS = re.compile(r"attempt (\d+) · (\S+ \S+)")


class Terminal:
    def __init__(self, args: list[str], cwd: Path):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        self.proc = subprocess.Popen(args, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                                     env={**env, "TERM": "xterm-256color"})
        os.close(slave)
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.ByteStream(self.screen)

    def until(self, attempt: int, state: str, needle: str, timeout: float) -> float:
        """The time at which the status line shows at least this attempt in this state, and needle is on screen."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if select.select([self.master], [], [], 0.005)[0]:
                self.stream.feed(os.read(self.master, 65536))
                status = STATUS.search(self.screen.display[0])
                if status and int(status[1]) >= attempt and status[2].startswith(state) and \
                        needle in "\n".join(self.screen.display):
                    return time.perf_counter()
        raise SystemExit(f"timed out after {timeout} s waiting for attempt {attempt}, {state} {needle}; the screen:\n"
                         + "\n".join(self.screen.display))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self.master)


def cpu_share(seconds: float = 0.05) -> float:
    """The share of one CPU this process gets now: CPU time over wall time of a busy loop (1.0 on an idle core)."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    while time.process_time() - cpu0 < seconds:
        pass
    return (time.process_time() - cpu0) / (time.perf_counter() - wall0)


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=12)
    parser.add_argument("--exercise", default="3")
    parser.add_argument("--target", type=float, default=0.5, help="seconds, for the load-adjusted median")
    args = parser.parse_args()
    ex = load_catalog().get(args.exercise)
    corpus = ROOT / "tests" / "corpus" / f"{ex.number:02d}"
    labelled = [(p, p.read_text().splitlines()[0].removeprefix("# expect: ")) for p in sorted(corpus.glob("*.py"))]
    pair = [b for b in labelled if b[1] not in ("pass", "timeout", "not_started", "syntax_error", "crash")][:2]
    grade = Path(sys.executable).with_name("grade")
    latencies, shares = [], []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ATTENTION_KIT_DATA_DIR"] = str(Path(tmp) / "data")  # the benchmark's grades stay out of your history
        ws = Path(tmp) / "ws"
        subprocess.run([str(grade), "init", str(ws)], check=True, capture_output=True)
        term = Terminal([str(grade), "watch", str(ex.number)], cwd=ws)
        try:
            term.until(1, "○ not", "", timeout=120)
            for i in range(args.saves + 1):
                path, expected = pair[i % 2]
                shares.append(cpu_share())
                time.sleep(0.2)
                start = time.perf_counter()
                shutil.copyfile(path, ws / "exercises" / ex.file)
                end = term.until(i + 2, "✗ failing", f"({expected})", timeout=60)
                if i:  # the first save also pays for first-use imports
                    latencies.append(end - start)
            grades = int(STATUS.search(term.screen.display[0])[1]) - 1
        finally:
            term.close()
    load_after = os.getloadavg()
    share = statistics.median(shares)
    median, adjusted = statistics.median(latencies), statistics.median(latencies) * share
    print(f"save-to-verdict-drawn latency over {len(latencies)} saves (exercise {ex.number}, {pair[0][1]} / {pair[1][1]}):")
    print(f"  median {median:.3f} s, p90 {p90(latencies):.3f} s, min {min(latencies):.3f} s, max {max(latencies):.3f} s")
    print(f"  {grades} grades for {args.saves + 1} saves (more: a save was graded twice)")
    print(f"  load average {load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} CPUs; "
          f"a process got {share:.0%} of a CPU (median)")
    print(f"  load-adjusted median {adjusted:.3f} s (target <= {args.target} s): {'met' if adjusted <= args.target else 'MISSED'}")
    sys.exit(0 if adjusted <= args.target else 1)


if __name__ == "__main__":
    main()
