"""A cgroup v2 per worker, where the machine has one we may write to: memory, processes and CPU are then
limited per submission (all its processes together), not per process.

The grader creates ``attention-kit-<pid>`` beside its own cgroup's leaf (inside the unified hierarchy),
writes memory.max, memory.swap.max, pids.max and cpu.max, moves the worker in before it boots (from the
worker itself, by writing "0" to cgroup.procs), and removes it after the worker is killed. On a machine
with a v1 or hybrid layout whose controllers are not in the unified hierarchy, ``available()`` says why
not, and the worker relies on seccomp (no fork) and its rlimits instead.
"""
from __future__ import annotations

import os
import time

ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
CONTROLLERS = ("memory", "pids", "cpu")


def _unified_root() -> str | None:
    for root in ROOTS:
        if os.path.isfile(os.path.join(root, "cgroup.controllers")):
            return root
    return None


def _own_path() -> str:
    """The grader's own cgroup in the unified hierarchy ("0::/path" in /proc/self/cgroup)."""
    with open("/proc/self/cgroup", encoding="ascii") as f:
        return next((line.split(":", 2)[2].strip() for line in f if line.startswith("0::")), "/")


def parent_dir() -> tuple[str | None, str]:
    """(directory under which worker cgroups go, or None; why not)."""
    root = _unified_root()
    if root is None:
        return None, "no cgroup v2 hierarchy mounted"
    try:
        own = _own_path()
        with open(os.path.join(root, "cgroup.controllers"), encoding="ascii") as f:
            available = f.read().split()
    except OSError as exc:
        return None, f"cgroup v2 unreadable: {exc.strerror or exc}"
    missing = [c for c in CONTROLLERS if c not in available]
    if missing:
        return None, f"cgroup v2 without the {', '.join(missing)} controller(s) (a v1 or hybrid layout holds them)"
    base = os.path.join(root, (own or "/").lstrip("/"))
    if not os.access(base, os.W_OK):
        return None, f"cgroup v2 at {base} is not writable by the grader"
    return base, ""


def available() -> tuple[bool, str]:
    base, why = parent_dir()
    return base is not None, why or f"cgroup v2 under {base}"


class WorkerCgroup:
    """One worker's cgroup; create() before the worker boots, join() in the worker, remove() after it."""

    def __init__(self, name: str):
        self.path: str | None = None
        self.name = name
        self.reason = ""

    def create(self, *, memory_mb: int, processes: int, cpus: float) -> bool:
        base, self.reason = parent_dir()
        if base is None:
            return False
        path = os.path.join(base, self.name)
        try:
            # a cgroup with processes may not enable controllers for its children (no internal processes):
            # the worker's cgroup is a sibling of the grader's leaf when the grader sits in the root's child
            with open(os.path.join(base, "cgroup.subtree_control"), "w", encoding="ascii") as f:
                f.write(" ".join(f"+{c}" for c in CONTROLLERS))
            os.mkdir(path)
            for name, value in (("memory.max", memory_mb << 20), ("memory.swap.max", 0), ("pids.max", processes),
                                ("cpu.max", f"{int(cpus * 100_000)} 100000")):
                try:
                    with open(os.path.join(path, name), "w", encoding="ascii") as f:
                        f.write(str(value))
                except FileNotFoundError:
                    pass  # memory.swap.max is absent without swap accounting
        except OSError as exc:
            self.reason = f"cgroup v2 not usable here: {exc.strerror or exc}"
            self.remove()
            return False
        self.path = path
        return True

    def join(self) -> None:
        """In the worker: move this process in (before it allocates or forks anything)."""
        if self.path:
            with open(os.path.join(self.path, "cgroup.procs"), "w", encoding="ascii") as f:
                f.write("0")

    def remove(self) -> None:
        if not self.name:
            return
        base, _ = parent_dir()
        path = self.path or (os.path.join(base, self.name) if base else None)
        if path is None or not os.path.isdir(path):
            return
        for _ in range(50):  # the killed processes leave the cgroup asynchronously
            try:
                os.rmdir(path)
                return
            except OSError:
                try:
                    with open(os.path.join(path, "cgroup.kill"), "w", encoding="ascii") as f:
                        f.write("1")
                except OSError:
                    pass
                time.sleep(0.02)
