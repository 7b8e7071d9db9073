"""Where the grader writes its gradebooks, caches, reports and results.json.

Each output folder is created (or found, owned by this user and not writable by others, or a
sticky folder such as /tmp) before grading starts, and held open as a directory fd from then on. Every file is written under that fd
to a fresh temporary name (O_CREAT|O_EXCL|O_NOFOLLOW) and renamed over its final name, so a
symbolic link planted in the folder is replaced, never followed, and a reader never sees half a file.
"""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class OutputError(Exception):
    """An output folder or file the grader may not or cannot write (a usage error before grading)."""


class OutputDir:
    """One output folder, opened once: `out = OutputDir(path); out.write("a.html", text); out.close()`."""

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            parent = os.open(self.path.parent, DIR_FLAGS)
            try:
                self.fd = os.open(self.path.name or ".", DIR_FLAGS | os.O_NOFOLLOW, dir_fd=parent)
            finally:
                os.close(parent)
        except FileExistsError:
            raise OutputError(f"{self.path} exists and is not a folder") from None
        except OSError as exc:
            if self.path.is_symlink():
                raise OutputError(f"{self.path} is a symbolic link; give the folder itself") from None
            raise OutputError(f"cannot use {self.path} as an output folder: {exc.strerror or exc}") from None
        info = os.fstat(self.fd)
        shared = bool(info.st_mode & stat.S_ISVTX)  # like /tmp: nobody can replace another user's entries
        if info.st_uid != os.geteuid() and not shared:
            self.close()
            raise OutputError(f"{self.path} belongs to another user; write the outputs to a folder of your own")
        if info.st_mode & stat.S_IWOTH and not shared:
            self.close()
            raise OutputError(f"{self.path} is writable by every user; `chmod o-w` it or choose another folder")

    def write(self, name: str, data: str | bytes) -> Path:
        """Atomically replace self.path/name with data (a str is written as UTF-8)."""
        if not name or "/" in name or name in (".", ".."):
            raise OutputError(f"not a plain file name: {name!r}")
        raw = data.encode("utf-8") if isinstance(data, str) else data
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, FILE_FLAGS, 0o644, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(raw)
            os.rename(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=self.fd)
            except OSError:
                pass
            raise
        return self.path / name

    def read(self, name: str) -> bytes | None:
        """The bytes of a regular file self.path/name, or None (absent, a link, a folder, unreadable)."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=self.fd)
        except OSError:
            return None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def close(self) -> None:
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
