"""What produced a grade: the installed kit and pack, torch and Python, the graded text, the budgets, the
device and the sandbox tier. Every --json verdict and gradebook row carries it, and the batch cache key
is built from it, so a grade can be reproduced and a stale one is never reused."""
from __future__ import annotations

import hashlib
import platform
from functools import lru_cache
from pathlib import Path

from grader import __version__
from grader.pack import PACKAGE_DIR, Pack


def _files(root: Path, suffixes=(".py", ".toml")) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.suffix in suffixes and "__pycache__" not in p.parts and p.is_file())


@lru_cache(maxsize=16)
def _digest(roots: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for root in map(Path, roots):
        for path in _files(root):
            h.update(str(path.relative_to(root.parent)).encode("utf-8", "surrogateescape") + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def kit_digest(pack: Pack | None = None) -> str:
    """A hash of everything installed that decides a verdict: the whole grader package (runner, policy,
    sandbox, suites, checks, diagnosis), the pack's metadata, references and own checks."""
    pack = pack or Pack.kit()
    return _digest((str(PACKAGE_DIR), str(pack.info), str(pack.solutions), str(pack.checks)))


def torch_version() -> str:
    import torch

    return str(torch.__version__)


def text_digest(text: str) -> str:
    """The digest of the text the grader checked and the worker compiled (one text, SECURITY.md)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record(*, pack: Pack | None, text: str, limits, device: str, tier: str) -> dict:
    """The provenance block of a verdict."""
    return {
        "kit": f"{__version__}+{kit_digest(pack)}",
        "torch": torch_version(),
        "python": platform.python_version(),
        "source_sha256": text_digest(text),
        "budget": {"cpu_s": limits.time_s, "wall_backstop_s": limits.backstop_s,
                   "memory_mb": limits.memory_mb},
        "device": device,
        "sandbox": tier,
    }
