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
    return sorted(p for p in root.rglob("*") if p.suffix in suffixes and p.is_file()
                  and not {"__pycache__", "_kit"} & set(p.relative_to(root).parts))


@lru_cache(maxsize=16)
def _digest(roots: tuple[tuple[str, str], ...]) -> str:
    h = hashlib.sha256()
    for label, root in roots:
        root = Path(root)
        for path in _files(root):
            name = label if path == root else f"{label}/{path.relative_to(root).as_posix()}"
            h.update(name.encode("utf-8", "surrogateescape") + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def kit_digest(pack: Pack | None = None) -> str:
    """A hash of everything installed that decides a verdict: the whole grader package (runner, policy,
    sandbox, suites, checks, diagnosis), the pack's metadata, references and own checks. The same for a
    checkout and for any install of it (an installed kit's copy of the pack, grader/_kit, counts as the pack)."""
    pack = pack or Pack.kit()
    return _digest((("grader", str(PACKAGE_DIR)), ("info.toml", str(pack.info)), ("solutions", str(pack.solutions)),
                    ("checks", str(pack.checks))))


def torch_version() -> str:
    """torch.__version__, read from the installed distribution when torch is not imported yet (a batch's main
    process asks before its pool starts, and importing torch there only to read its version cost seconds)."""
    import sys

    if "torch" not in sys.modules:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("torch")
        except PackageNotFoundError:
            pass
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
