"""What every worker gets, whichever way it is started: its limits, its environment and what decides its view."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # put on the worker's sys.path to boot it


@dataclass(frozen=True)
class Limits:
    time_s: float = 30.0  # the submission's CPU seconds for the whole grading session: decides a timeout
    backstop: float = 3.0  # wall clock allowed: backstop x time_s + 10 s (a worker that waits instead of computing)
    cpu_s: int = 60  # RLIMIT_CPU, boot included (raised to time_s + 30 when that is more)
    memory_mb: int = 2048  # address space (and the cgroup's memory.max where there is one); torch maps ~0.6 GB
    file_mb: int = 4
    output_kb: int = 8  # what the submission prints, as kept for --verbose and reports
    processes: int = 64  # processes + threads of the worker's own uid (root), or its cgroup's pids.max
    cpus: float = 1.0  # the cgroup's cpu.max, in cores, where there is one
    device: str = "cpu"  # "cuda": the worker keeps what CUDA needs (/proc, /sys, device nodes), a weaker view
    hidden: tuple[str, ...] = ()  # directories the worker must not read even inside an allowed one (a --pack)


    @property
    def backstop_s(self) -> float:
        """The wall-clock seconds after which a session ends whatever its CPU use (a worker that waits)."""
        return self.backstop * self.time_s + 10.0

def worker_env(home: str) -> dict[str, str]:
    """The whole environment a worker sees: nothing of the grader's beyond PATH."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
