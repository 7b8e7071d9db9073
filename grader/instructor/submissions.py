"""Finding submissions and their exercise files: folders or .zip archives, read defensively.

A submission is a folder or a .zip inside the submissions directory. Its exercise files carry the
skeletons' names (01_self_attention.py, ...), either at the top or one folder down (the handout
keeps them in exercises/). A zip whose entries all sit in one folder is read as that folder.

Only the expected files are ever taken out of an archive, each under a name the grader chooses,
so an entry such as ../../etc/passwd or an absolute path cannot land anywhere. Symbolic links
are refused (a link to the kit's own solutions/ would otherwise be graded), and sizes are capped.
"""
from __future__ import annotations

import hashlib
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.catalog import Exercise

MAX_FILE_BYTES = 1 << 20  # one exercise file
MAX_ZIP_BYTES = 64 << 20  # a whole archive, compressed
MAX_ZIP_ENTRIES = 5000
SKIP_DIRS = {"__MACOSX", "__pycache__", ".git", ".ipynb_checkpoints"}


@dataclass
class Submission:
    name: str
    source: Path
    files: dict[int, Path] = field(default_factory=dict)  # exercise number -> file to grade
    located: dict[int, str] = field(default_factory=dict)  # exercise number -> its path inside the submission
    rejected: dict[int, str] = field(default_factory=dict)  # exercise number -> why its file is not graded
    problem: str = ""  # why the submission as a whole could not be read

    def digest(self, salt: str = "") -> str:
        """A content hash of what is graded (file bytes and refusals), plus the caller's salt."""
        h = hashlib.sha256(salt.encode())
        for number in sorted(self.files):
            data = self.files[number].read_bytes()
            h.update(f"\0file {number} {len(data)}\0".encode())
            h.update(data)
        for number in sorted(self.rejected):
            h.update(f"\0rejected {number} {self.rejected[number]}".encode())
        h.update(f"\0problem {self.problem}".encode())
        return h.hexdigest()[:24]


def discover(root: Path) -> list[Path]:
    """The submissions in root: its folders and .zip files, by name (hidden entries skipped)."""
    found = [p for p in Path(root).iterdir()
             if not p.name.startswith(".") and p.name not in SKIP_DIRS
             and (p.is_dir() or (p.is_file() and p.suffix.lower() == ".zip"))]
    return sorted(found, key=lambda p: p.name)


def names_for(sources: list[Path]) -> list[str]:
    """Folder name or zip stem; the full file name where a folder and a zip would share one."""
    stems = [s.stem if s.is_file() else s.name for s in sources]
    return [s.name if stems.count(stem) > 1 else stem for s, stem in zip(sources, stems)]


def open_submission(source: Path, name: str, scratch: Path, exercises: list[Exercise]) -> Submission:
    """Locate each exercise's file; a zip's files are copied into scratch (a fresh folder)."""
    sub = Submission(name, Path(source))
    if sub.source.is_dir():
        _from_folder(sub, exercises)
    else:
        scratch.mkdir(parents=True, exist_ok=True)
        _from_zip(sub, scratch, exercises)
    return sub


def _candidates(parts_of: dict[tuple[str, ...], object], filename: str) -> list[tuple[str, ...]]:
    """Paths (as parts) that hold filename at the top or one folder down, top first."""
    top = [(filename,)] if (filename,) in parts_of else []
    below = sorted(p for p in parts_of if len(p) == 2 and p[1] == filename)
    return top + below


def _visible(parts: tuple[str, ...]) -> bool:
    return not any(part.startswith(".") or part in SKIP_DIRS for part in parts)


def _from_folder(sub: Submission, exercises: list[Exercise]) -> None:
    root = sub.source
    entries: dict[tuple[str, ...], Path] = {}
    for child in root.iterdir():
        if not _visible((child.name,)):
            continue
        entries[(child.name,)] = child
        if child.is_dir() and not child.is_symlink():
            for grandchild in child.iterdir():
                entries[(child.name, grandchild.name)] = grandchild
    for ex in exercises:
        paths = _candidates(entries, ex.file)
        if not paths:
            continue
        parts = paths[0]
        path = entries[parts]
        sub.located[ex.number] = "/".join(parts)
        if path.is_symlink():
            sub.rejected[ex.number] = f"{'/'.join(parts)} is a symbolic link; only regular files are graded"
        elif not path.is_file():
            sub.rejected[ex.number] = f"{'/'.join(parts)} is not a regular file"
        elif path.stat().st_size > MAX_FILE_BYTES:
            sub.rejected[ex.number] = f"{'/'.join(parts)} is larger than {MAX_FILE_BYTES >> 20} MB"
        else:
            sub.files[ex.number] = path


def _zip_entries(archive: zipfile.ZipFile) -> dict[tuple[str, ...], zipfile.ZipInfo]:
    """Regular-file entries by their path parts, unsafe and hidden ones dropped, one shared top folder removed."""
    entries: dict[tuple[str, ...], zipfile.ZipInfo] = {}
    for info in archive.infolist():
        name = info.filename.replace("\\", "/")
        parts = PurePosixPath(name).parts
        is_link = stat.S_ISLNK(info.external_attr >> 16)
        if (info.is_dir() or is_link or not parts or name.startswith("/") or ":" in parts[0]
                or ".." in parts or not _visible(parts)):
            continue
        entries[parts] = info
    tops = {parts[0] for parts in entries}
    if len(tops) == 1 and all(len(parts) > 1 for parts in entries):
        entries = {parts[1:]: info for parts, info in entries.items()}
    return entries


def _from_zip(sub: Submission, scratch: Path, exercises: list[Exercise]) -> None:
    if sub.source.stat().st_size > MAX_ZIP_BYTES:
        sub.problem = f"the archive is larger than {MAX_ZIP_BYTES >> 20} MB"
        return
    try:
        with zipfile.ZipFile(sub.source) as archive:
            if len(archive.infolist()) > MAX_ZIP_ENTRIES:
                sub.problem = f"the archive has more than {MAX_ZIP_ENTRIES} entries"
                return
            entries = _zip_entries(archive)
            for ex in exercises:
                paths = _candidates(entries, ex.file)
                if not paths:
                    continue
                shown = "/".join(paths[0])
                sub.located[ex.number] = shown
                with archive.open(entries[paths[0]]) as member:
                    data = member.read(MAX_FILE_BYTES + 1)  # the header's size is not trusted
                if len(data) > MAX_FILE_BYTES:
                    sub.rejected[ex.number] = f"{shown} is larger than {MAX_FILE_BYTES >> 20} MB"
                    continue
                target = scratch / ex.file  # a name the grader chose, inside scratch
                target.write_bytes(data)
                sub.files[ex.number] = target
    except (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, NotImplementedError, EOFError, OSError,
            zlib.error) as exc:
        sub.files.clear()
        sub.problem = f"not a readable zip archive ({type(exc).__name__}: {exc})"
