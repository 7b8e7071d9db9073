"""Save-to-verdict latency of `grade watch`, measured in a pseudo-terminal.

Usage: python bench/watch_latency.py [--saves 10] [--exercise 3]
Creates a workspace, starts `grade watch N`, then alternately saves two buggy versions of the
exercise (from tests/corpus) and times each save until the new diagnosis is on the screen.
"""
from __future__ import annotations

import argparse
import os
import pty
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def read_until(fd: int, needle: str, timeout: float) -> float:
    start, seen = time.perf_counter(), ""
    while time.perf_counter() - start < timeout:
        if select.select([fd], [], [], 0.01)[0]:
            seen += ANSI.sub("", os.read(fd, 65536).decode(errors="replace"))
            if needle in seen:
                return time.perf_counter()
    raise SystemExit(f"timed out waiting for {needle!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=10)
    parser.add_argument("--exercise", default="3")
    args = parser.parse_args()
    ex = load_catalog().get(args.exercise)
    corpus = ROOT / "tests" / "corpus" / f"{ex.number:02d}"
    buggy = [(p, p.read_text().splitlines()[0].removeprefix("# expect: ")) for p in sorted(corpus.glob("*.py"))]
    pair = [b for b in buggy if b[1] not in ("pass", "timeout", "not_started", "syntax_error")][:2]
    grade = Path(sys.executable).with_name("grade")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        subprocess.run([str(grade), "init", str(ws)], check=True, capture_output=True)
        master, slave = pty.openpty()
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
        proc = subprocess.Popen([str(grade), "watch", str(ex.number)], cwd=ws, stdin=slave, stdout=slave, stderr=slave, env=env)
        os.close(slave)
        try:
            read_until(master, "q quit", 60)
            latencies = []
            for i in range(args.saves + 1):
                path, expected = pair[i % 2]
                time.sleep(0.3)
                start = time.perf_counter()
                shutil.copyfile(path, ws / "exercises" / ex.file)
                end = read_until(master, f"({expected})", 30)
                if i:  # the first save also pays for first-use imports
                    latencies.append(end - start)
        finally:
            proc.kill()
            proc.wait()
    print(f"save-to-verdict latency over {len(latencies)} saves (exercise {ex.number}, {pair[0][1]} / {pair[1][1]}):")
    print(f"  median {statistics.median(latencies):.3f} s, min {min(latencies):.3f} s, max {max(latencies):.3f} s "
          f"(target <= 0.5 s)")


if __name__ == "__main__":
    main()
