"""A process's state and CPU time, read by another process from /proc/<pid>/stat: what a submission's budget
counts, whatever the load, and whether a fork server is running, stopped or gone."""
from __future__ import annotations

import os

TICKS = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int | None) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (state first), or None if it cannot be read."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields or None


def run_state(pid: int | None) -> str:
    """The kernel's one-letter state of pid (R, S, T stopped, Z zombie, ...); X if it is gone."""
    fields = stat_fields(pid)
    return fields[0].decode() if fields else "X"


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of pid (all its threads); None if it cannot be read."""
    fields = stat_fields(pid)
    try:
        return (int(fields[11]) + int(fields[12])) / TICKS if fields else None  # utime, stime (proc(5): 14, 15)
    except (IndexError, ValueError):
        return None
