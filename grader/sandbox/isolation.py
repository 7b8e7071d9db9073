"""Runtime isolation of a worker process: resource limits and namespaces, applied before exec."""
from __future__ import annotations

import ctypes
import resource
import signal
from dataclasses import dataclass

CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Limits:
    wall_s: float = 30.0  # one budget for the whole grading session of a submission
    cpu_s: int = 60
    memory_mb: int = 2048  # address space; torch itself maps about 0.6 GB
    file_mb: int = 4
    output_kb: int = 8  # what the submission prints, as kept for --verbose and reports


def isolate_child(limits: Limits) -> None:
    """Runs in the forked child: resource limits, death signal, and no network where the OS allows it."""
    mb = 1 << 20
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb, limits.memory_mb * mb))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * mb, limits.file_mb * mb))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    libc.unshare(CLONE_NEWNET)  # fails quietly without privileges; then the policy check is the guard


def after_boot() -> None:
    """Runs in the worker after torch is imported and before the submission is: a place to drop
    what the submission must not have (privileges, file access). Nothing more is done yet."""
