"""A process's CPU time, read by another process: what a submission's budget counts, whatever the load."""
from __future__ import annotations

import os

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of pid (all its threads) from /proc/<pid>/stat; None if it cannot be read."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15 of proc(5))
    except (OSError, IndexError, ValueError):
        return None
