"""Finding submissions and their exercise files: folders or .zip archives, read defensively.

A submission is a folder or a .zip inside the submissions directory. Its exercise files carry the
skeletons' names (01_self_attention.py, ...), either at the top or one folder down (the handout
keeps them in exercises/). A zip whose entries all sit in one folder is read as that folder.

Only the expected files are ever taken out of an archive, each under a name the grader chooses,
so an entry such as ../../etc/passwd or an absolute path cannot land anywhere. Symbolic links
are refused (a link to the kit's own solutions/ would otherwise be graded), and sizes are capped.
Each file is read once into a private copy (a folder only the grader can open): that copy is hashed
and graded, so a file replaced in the submissions folder meanwhile changes neither.
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.catalog import Exercise
from grader.sandbox.textsafe import visible
from grader.source import Unreadable, notebook_source

MAX_FILE_BYTES = 1 << 20  # one exercise file
MAX_ZIP_BYTES = 64 << 20  # a whole archive, compressed
MAX_ZIP_ENTRIES = 5000
SKIP_DIRS = {"__MACOSX", "__pycache__", ".git", ".ipynb_checkpoints"}
MAX_DEPTH = 4  # folder levels searched for near-miss names
MAX_LISTED = 2000  # entries of a folder submission looked at, in all


@dataclass
class Submission:
    name: str
    source: Path
    files: dict[int, Path] = field(default_factory=dict)  # exercise number -> its private copy, graded
    hashes: dict[int, str] = field(default_factory=dict)  # exercise number -> sha256 of the copy's bytes
    located: dict[int, str] = field(default_factory=dict)  # exercise number -> its path inside the submission
    rejected: dict[int, str] = field(default_factory=dict)  # exercise number -> why its file is not graded
    near: dict[int, str] = field(default_factory=dict)  # exercise number -> a nearly right path ("did you mean")
    problem: str = ""  # why the submission as a whole could not be read
    notes: list[str] = field(default_factory=list)  # what a person should look at: ambiguities, refusals, empties

    def digest(self, salt: str = "") -> str:
        """A content hash of what is graded (file bytes and refusals), plus the caller's salt."""
        h = hashlib.sha256(salt.encode())
        for number in sorted(self.files):
            h.update(f"\0file {number} {self.hashes[number]}".encode())
        for number in sorted(self.rejected):
            h.update(f"\0rejected {number} {self.rejected[number]}".encode())
        for number in sorted(self.near):
            h.update(f"\0near {number} {self.near[number]}".encode())
        h.update(f"\0problem {self.problem}".encode())
        return h.hexdigest()[:24]


def discover(root: Path) -> list[Path]:
    """The submissions in root: its folders and .zip files, by name (hidden entries skipped); links to folders,
    to .zip files and broken ones too, so that open_submission refuses them in a row of their own."""
    found = [p for p in Path(root).iterdir()
             if not p.name.startswith(".") and p.name not in SKIP_DIRS
             and (p.is_dir() or p.suffix.lower() == ".zip" and (p.is_file() or p.is_symlink())
                  or (p.is_symlink() and not p.exists()))]
    return sorted(found, key=lambda p: p.name)


def names_for(sources: list[Path]) -> list[str]:
    """Folder name or zip stem; the full file name where a folder and a zip would share one. Names are shown
    as visible() escapes them; two that would still read alike get a short hash of their bytes appended."""
    stems = [_stem(s) for s in sources]
    names = [visible(s.name) if stems.count(stem) > 1 else stem for s, stem in zip(sources, stems)]
    return [f"{name}-{hashlib.sha256(os.fsencode(s.name)).hexdigest()[:8]}" if names.count(name) > 1 else name
            for s, name in zip(sources, names)]


def _stem(source: Path) -> str:
    return visible(source.stem if source.suffix.lower() == ".zip" and not source.is_dir() else source.name)


def shared_names(sources: list[Path]) -> dict[Path, str]:
    """A note for each submission whose name another one shares (a folder and a zip: alice/ and alice.zip)."""
    stems = [_stem(s) for s in sources]
    notes = {}
    for source, stem in zip(sources, stems):
        others = [visible(o.name) for o, st in zip(sources, stems) if st == stem and o != source]
        if others:
            notes[source] = (f"{visible(source.name)} and {', '.join(others)} are both named {stem!r}: each is graded as "
                             f"its own submission; keep the one that counts")
    return notes


def open_submission(source: Path, name: str, scratch: Path, exercises: list[Exercise]) -> Submission:
    """Locate each exercise's file and copy it into scratch (a fresh folder, private to the grader).

    Whatever goes wrong while reading it becomes this submission's problem, never the caller's exception."""
    sub = Submission(name, Path(source))
    try:
        if sub.source.is_symlink():
            sub.problem = f"{visible(sub.source.name)} is a symbolic link; only real folders and .zip files are graded"
        elif sub.source.is_dir():
            entries = _folder_entries(sub.source)
            if not entries:
                sub.notes.append("the folder is empty")
            sub.notes += [f"{'/'.join(parts)}/ is a symbolic link to a folder; not looked into"
                          for parts, path in entries.items() if path.is_symlink() and path.is_dir()]
            _take(sub, scratch, exercises, entries, _read_path)
        else:
            _from_zip(sub, scratch, exercises)
    except Exception as exc:  # one unreadable submission is its own rejected row, not the end of the batch
        sub.files.clear()
        sub.hashes.clear()
        sub.notes.clear()
        sub.problem = f"could not be read ({type(exc).__name__}: {visible(str(exc))[:200]})"
    return sub


def looks_like_one_submission(root: Path, exercises: list[Exercise]) -> str | None:
    """The exercise file root holds as one submission would: at its top, or in exercises/ (the handout's)."""
    entries = _folder_entries(Path(root), depth=2)
    for ex in exercises:
        for filename in (ex.file, notebook_name(ex)):
            for parts in ((filename,), ("exercises", filename)):
                if parts in entries:
                    return "/".join(parts)
    return None


def notebook_name(ex: Exercise) -> str:
    return ex.file.rsplit(".", 1)[0] + ".ipynb"


def loose(name: str) -> str:
    """A file name as people mistype it: case, spaces and dashes, ' (1)' and ' copy' copies all ignored."""
    stem, dot, suffix = name.lower().rpartition(".")
    stem = re.sub(r"(\s*\(\d+\)|\s*-?\s*copy(\s*\d+)?)+$", "", stem if dot else suffix)
    stem = re.sub(r"[\s\-_]+", "_", stem).strip("_")
    return f"{stem}.{suffix}" if dot else stem


def _candidates(parts_of: dict[tuple[str, ...], object], filename: str) -> list[tuple[str, ...]]:
    """Paths (as parts) that hold filename at the top or one folder down, top first."""
    top = [(filename,)] if (filename,) in parts_of else []
    below = sorted(p for p in parts_of if len(p) == 2 and p[1] == filename)
    return top + below


def _near_miss(parts_of: dict[tuple[str, ...], object], ex: Exercise) -> str | None:
    wanted = {loose(ex.file), loose(notebook_name(ex))}
    hits = sorted((len(p), p) for p in parts_of if loose(p[-1]) in wanted)
    return "/".join(hits[0][1]) if hits else None


def _visible(parts: tuple[str, ...]) -> bool:
    return not any(part.startswith(".") or part in SKIP_DIRS for part in parts)


def _folder_entries(root: Path, depth: int = MAX_DEPTH) -> dict[tuple[str, ...], Path]:
    """Entries of a folder (links listed, never followed), breadth first, MAX_LISTED at most."""
    entries: dict[tuple[str, ...], Path] = {}
    level = [((), root)]
    for _ in range(depth):
        below = []
        for parts, folder in level:
            try:
                children = sorted(folder.iterdir(), key=lambda p: p.name)
            except OSError:
                continue
            for child in children:
                here = (*parts, visible(child.name))
                if not _visible(here) or len(entries) >= MAX_LISTED:
                    continue
                entries[here] = child
                if child.is_dir() and not child.is_symlink():
                    below.append((here, child))
        level = below
    return entries


def _read_path(path: Path, shown: str) -> bytes | str:
    """The file's bytes, or why it is not graded: opened once, never through a link, read up to the cap."""
    link = f"{shown} is a symbolic link; only regular files are graded"
    if path.is_symlink():
        return link
    if not path.is_file():
        return f"{shown} is not a regular file"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return link if exc.errno == errno.ELOOP else f"{shown} could not be read ({exc.strerror})"
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return f"{shown} is not a regular file"
        data = f.read(MAX_FILE_BYTES + 1)
    return f"{shown} is larger than {MAX_FILE_BYTES >> 20} MB" if len(data) > MAX_FILE_BYTES else data


def _take(sub: Submission, scratch: Path, exercises: list[Exercise], entries: dict, read) -> None:
    """For each exercise: its file (or notebook) from entries via read(entry, shown) -> bytes | reason."""
    for ex in exercises:
        scripts, notebooks = _candidates(entries, ex.file), _candidates(entries, notebook_name(ex))
        notebook = not scripts
        paths = scripts or notebooks
        if not paths:
            near = _near_miss(entries, ex)
            if near:
                sub.near[ex.number] = near
            continue
        shown = "/".join(paths[0])
        sub.located[ex.number] = shown
        others = ["/".join(p) for p in (scripts + notebooks)[1:]]
        if others:
            sub.notes.append(f"ex{ex.number}: {shown} graded; also found {', '.join(others)}, not graded")
        data = read(entries[paths[0]], shown)
        if isinstance(data, str):
            sub.rejected[ex.number] = data
            continue
        if notebook:  # graded as a notebook (grader/source.py), so lines are reported as cell and line
            try:
                notebook_source(data)
            except (Unreadable, RecursionError):
                sub.rejected[ex.number] = f"{shown} is not a readable notebook"
                continue
        sub.files[ex.number] = _private_copy(scratch, notebook_name(ex) if notebook else ex.file, data)
        sub.hashes[ex.number] = hashlib.sha256(data).hexdigest()


def _private_copy(scratch: Path, name: str, data: bytes) -> Path:
    """data written to scratch/name (a name the grader chose), scratch readable by the grader only."""
    scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
    scratch.chmod(0o700)
    target = scratch / name
    target.write_bytes(data)
    return target


def _zip_entries(archive: zipfile.ZipFile, notes: list[str] | None = None) -> dict[tuple[str, ...], zipfile.ZipInfo]:
    """Regular-file entries by their path parts, unsafe and hidden ones dropped, one shared top folder removed.

    notes gets what was refused and why (links, paths outside the archive, an entry given twice).
    """
    notes = [] if notes is None else notes
    entries: dict[tuple[str, ...], zipfile.ZipInfo] = {}
    for info in archive.infolist():
        if not info.orig_filename or "\0" in info.orig_filename:  # zipfile cuts a name at its NUL: "" is left
            raise ValueError("an entry has an empty name or one holding a NUL character")
        name = visible(info.filename.replace("\\", "/"))
        parts = PurePosixPath(name).parts
        if info.is_dir() or not parts:
            continue
        if name.startswith("/") or ":" in parts[0] or ".." in parts:
            notes.append(f"{name} points outside the archive; refused")
        elif not _visible(parts):
            continue
        elif stat.S_ISLNK(info.external_attr >> 16):
            notes.append(f"{name} is a symbolic link in the archive; refused")
        elif parts in entries:
            notes.append(f"{name} is in the archive twice; the last copy was taken")
            entries[parts] = info
        else:
            entries[parts] = info
    tops = {parts[0] for parts in entries}
    if len(tops) == 1 and all(len(parts) > 1 for parts in entries):
        entries = {parts[1:]: info for parts, info in entries.items()}
    return entries


EOCD = struct.Struct("<4s4H2LH")  # end of central directory: signature, disks, entries here, entries, size, offset
EOCD64 = struct.Struct("<4sQ2H2L4Q")  # zip64 end of central directory record
LOCATOR64 = struct.Struct("<4sLQL")
CENTRAL = struct.Struct("<4s6H3L5H2L")  # one central-directory header, before its name, extra and comment


def zip_entry_count(f, size: int, limit: int = MAX_ZIP_ENTRIES) -> int:
    """The number of entries, from the end records and a capped walk of the central directory.

    Returns at most limit + 1 (more than limit, whatever the records claim). Raises ValueError when the
    end records are missing or point outside the file. Reads at most limit + 1 headers, never the whole
    directory, so a zip with 700 000 entries costs a few kilobytes to refuse.
    """
    tail_len = min(size, EOCD.size + 0xFFFF)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < EOCD.size:
        raise ValueError("no end-of-central-directory record")
    _, _, _, _, count, cd_size, cd_offset, _ = EOCD.unpack_from(tail, at)
    if count == 0xFFFF or cd_offset == 0xFFFFFFFF:
        loc = at - LOCATOR64.size
        if loc < 0 or tail[loc:loc + 4] != b"PK\x06\x07":
            raise ValueError("a zip64 archive without its locator")
        offset64 = LOCATOR64.unpack_from(tail, loc)[2]
        f.seek(offset64)
        record = f.read(EOCD64.size)
        if len(record) < EOCD64.size or record[:4] != b"PK\x06\x06":
            raise ValueError("a broken zip64 end record")
        count, cd_size, cd_offset = EOCD64.unpack(record)[7:10]
    if count > limit:
        return limit + 1
    if cd_offset + cd_size > size:
        raise ValueError("the central directory points outside the file")
    f.seek(cd_offset)
    seen = 0
    while seen <= limit:
        head = f.read(CENTRAL.size)
        if len(head) < CENTRAL.size or head[:4] != b"PK\x01\x02":
            break
        fields = CENTRAL.unpack(head)
        f.seek(fields[10] + fields[11] + fields[12], 1)  # name, extra field, comment
        seen += 1
    return max(seen, count)


def _from_zip(sub: Submission, scratch: Path, exercises: list[Exercise]) -> None:
    size = sub.source.stat().st_size
    if size > MAX_ZIP_BYTES:
        sub.problem = f"the archive is larger than {MAX_ZIP_BYTES >> 20} MB"
        return
    try:
        with open(sub.source, "rb") as f:
            if zip_entry_count(f, size) > MAX_ZIP_ENTRIES:
                sub.problem = f"the archive has more than {MAX_ZIP_ENTRIES} entries"
                return
        with zipfile.ZipFile(sub.source) as archive:
            entries = _zip_entries(archive, sub.notes)
            if not archive.infolist():
                sub.notes.append("the archive is empty")
            elif not entries:
                sub.notes.append("the archive holds no file that could be graded")

            def read(info: zipfile.ZipInfo, shown: str) -> bytes | str:
                with archive.open(info) as member:
                    data = member.read(MAX_FILE_BYTES + 1)  # the header's size is not trusted
                return f"{shown} is larger than {MAX_FILE_BYTES >> 20} MB" if len(data) > MAX_FILE_BYTES else data

            _take(sub, scratch, exercises, entries, read)
    except (ValueError, zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, NotImplementedError, EOFError,
            OSError, zlib.error, struct.error) as exc:
        sub.files.clear()
        sub.hashes.clear()
        sub.notes.clear()
        sub.problem = f"not a readable zip archive ({type(exc).__name__}: {exc})"


# -- a flat LMS download ----------------------------------------------------------------------------------------
# Canvas's "Download Submissions" puts every file of every student in one folder, named
# lastfirst_[LATE_]userid_submissionid_original.py, with "-1", "-2" before the extension of a resubmitted file.
CANVAS_NAME = re.compile(r"^(?P<student>[^_]+?)(?:_late)?_(?P<user>\d+)_(?P<attempt>\d+)_(?P<file>.+)$", re.IGNORECASE)
RESUBMITTED = re.compile(r"-(\d+)(?=\.[^.]+$)")
FLAT_SUFFIXES = (".py", ".ipynb")


@dataclass
class FlatGroup:
    """One student's files in a flat download: entries as _take reads them, {(file name,): path}."""
    name: str
    user: str
    entries: dict[tuple[str, ...], Path] = field(default_factory=dict)
    student: str = ""  # the name part of the files' names
    notes: list[str] = field(default_factory=list)


@dataclass
class Stray:
    """A file at the top of the submissions folder that is no submission and no file of an LMS download: a .py
    or .ipynb is a row of its own, rejected with why (somebody meant to hand it in); anything else a warning."""
    path: Path
    name: str
    why: str
    row: bool = True


def flat_groups(root: Path, taken: set[str] = frozenset()) -> tuple[list[FlatGroup], list[Stray]]:
    """The students of a flat download in root (files at its top), and the files that are named otherwise.

    A student is the name part plus the LMS user id; two students with the same name part are told apart by
    their ids (and noted), as is a name that a folder or zip (taken) already uses.
    """
    groups: dict[tuple[str, str], FlatGroup] = {}
    strays = []
    versions: dict[tuple[str, str, str], list[tuple[int, str, Path]]] = {}
    for path in sorted(Path(root).iterdir(), key=lambda p: p.name):
        shown = visible(path.name)
        if (path.name.startswith(".") or path.name in SKIP_DIRS or path.is_dir() or path.suffix.lower() == ".zip"
                or path.is_symlink() and not path.exists()):  # submissions (discover), or hidden
            continue
        if path.suffix.lower() not in FLAT_SUFFIXES:
            strays.append(Stray(path, shown, f"{shown} is not a folder, a .zip or an exercise file; not graded",
                                row=False))
            continue
        m = CANVAS_NAME.match(shown)
        if not m:
            strays.append(Stray(path, shown, f"{shown} is not named as an LMS download names its files "
                                             f"(lastfirst_userid_submissionid_file); not graded"))
            continue
        student, user = m["student"], m["user"]
        groups.setdefault((student, user), FlatGroup(student, user, student=student))
        attempt = RESUBMITTED.search(m["file"])
        original = RESUBMITTED.sub("", m["file"])
        versions.setdefault((student, user, original), []).append((int(attempt[1]) if attempt else 0, shown, path))
    for (student, user, original), found in versions.items():
        found.sort()
        group = groups[(student, user)]
        group.entries[(original,)] = found[-1][2]
        if len(found) > 1:
            group.notes.append(f"{found[-1][1]} graded as {original}; also found "
                               f"{', '.join(name for _, name, _ in found[:-1])}, not graded")
    named = [g.name for g in groups.values()]
    for group in groups.values():
        if named.count(group.name) > 1 or group.name in taken:
            group.notes.insert(0, f"another submission is also named {group.name!r}; this one is LMS user {group.user}")
            group.name = f"{group.name}_{group.user}"
    rows = {g.name for g in groups.values()} | set(taken)
    for stray in (s for s in strays if s.row):
        if stray.name in rows:
            stray.name = f"{stray.name}-{hashlib.sha256(os.fsencode(stray.path.name)).hexdigest()[:8]}"
        rows.add(stray.name)
    return sorted(groups.values(), key=lambda g: g.name), strays


def open_stray(stray: Stray) -> Submission:
    """The row of a stray exercise file: rejected as a whole, saying why."""
    return Submission(stray.name, stray.path, problem=stray.why)


def open_flat(group: FlatGroup, root: Path, scratch: Path, exercises: list[Exercise]) -> Submission:
    sub = Submission(group.name, Path(root), notes=list(group.notes))
    _take(sub, scratch, exercises, group.entries, _read_path)
    return sub
