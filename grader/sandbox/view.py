"""What a worker may see of the file system: an allowlist, and every copy of the kit it must not see.

The worker's private root holds the system directories, Python's standard library, and from the
site-packages directories only the distributions a booted worker still imports from (torch, numpy,
safetensors and what they require, found through their metadata), plus its own directory. Whatever
else sits in site-packages, the kit's own package included, is not there. ``kit_copies`` finds the
copies of the kit on this machine (installed wheel, editable install, a checkout or sdist, a
``.venv`` inside a clone): the self-check probes them, and the fallback without a private root
covers them.
"""
from __future__ import annotations

import os
import re
import sys
from functools import cache
from pathlib import Path

NEEDED = ("torch", "numpy", "safetensors")  # what a worker imports from site-packages after it boots
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the grader package in use


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _site_dirs() -> list[str]:
    """The sys.path directories that are not the standard library (site-packages, .pth additions)."""
    std = set(stdlib_dirs())
    out = []
    for entry in sys.path:
        path = os.path.abspath(entry or ".")
        if os.path.isdir(path) and path not in std and not any(path.startswith(s + "/lib-dynload") for s in std):
            out.append(path)
    return list(dict.fromkeys(out))


def _all_site_dirs() -> list[str]:
    """Every package directory of every Python here, on sys.path or not: each may hold a copy of the kit."""
    patterns = [f"{s}/{kind}-packages" for s in stdlib_dirs() for kind in ("site", "dist")]
    patterns += ["/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages", "/usr/lib/python3/dist-packages"]
    found = [str(p) for pattern in patterns for p in Path("/").glob(pattern.lstrip("/")) if p.is_dir()]
    return list(dict.fromkeys(_site_dirs() + found))


def _metadata_dirs(sites: list[str]) -> dict[str, str]:
    """normalised distribution name -> its .dist-info (or .egg-info) directory, first on sys.path wins."""
    found: dict[str, str] = {}
    for site in sites:
        try:
            names = os.listdir(site)
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                found.setdefault(_norm(name.rsplit(".", 1)[0].split("-")[0]), os.path.join(site, name))
    return found


def _read(directory: str, name: str) -> str:
    try:
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def _requires(meta: str) -> list[str]:
    text = _read(meta, "METADATA") + _read(meta, "PKG-INFO")
    reqs = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]
    reqs += [line for line in _read(meta, "requires.txt").splitlines() if line and not line.startswith("[")]
    return [re.match(r"[A-Za-z0-9_.-]+", r)[0] for r in reqs if "extra ==" not in r and re.match(r"[A-Za-z0-9_.-]+", r)]


def _top_level(meta: str) -> set[str]:
    names = set(_read(meta, "top_level.txt").split())
    if not names:  # wheels without top_level.txt: the first component of every installed file
        names = {line.split(",")[0].split("/")[0] for line in _read(meta, "RECORD").splitlines()}
    return {n for n in names if n and n not in ("..", "__pycache__") and not n.endswith((".dist-info", ".pth"))}


@cache
def allowed_paths(needed: tuple[str, ...] = NEEDED) -> tuple[str, ...]:
    """The files and directories of site-packages a worker may see: the needed distributions and
    everything they require (by their metadata), each with its .dist-info and native-library folder."""
    sites = _site_dirs()
    metas = _metadata_dirs(sites)
    todo, seen, out = [_norm(n) for n in needed], set(), []
    while todo:
        name = todo.pop()
        if name in seen or name == "attention_kit":
            continue
        seen.add(name)
        meta = metas.get(name)
        if meta is None:
            continue
        out.append(meta)
        site = os.path.dirname(meta)
        for top in _top_level(meta):
            for candidate in (top, top + ".py", top + ".libs"):
                if os.path.exists(os.path.join(site, candidate)):
                    out.append(os.path.join(site, candidate))
        todo += [_norm(r) for r in _requires(meta)]
    for name in needed:  # installed without metadata (a system package): the module's own directory
        if not any(_norm(name) == _norm(os.path.basename(p).split("-")[0]) for p in out):
            module = sys.modules.get(name)
            if module is not None and getattr(module, "__file__", None):
                out.append(os.path.dirname(os.path.realpath(module.__file__)))
    return tuple(dict.fromkeys(out))


def stdlib_dirs() -> list[str]:
    """The standard library and its extension modules (lib-dynload), of the base Python even in a venv."""
    dirs = [os.path.dirname(os.path.abspath(os.__file__))]
    dirs += [os.path.dirname(os.path.abspath(p)) for p in sys.path if p.endswith("lib-dynload")]
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d)))


def closed_to_others() -> bool:
    """Whether a directory on the way to the standard library or site-packages is closed to other users (a
    Python under /root): a worker of its own uid without a private root cannot import from there once booted."""
    for top in [*stdlib_dirs(), *_site_dirs()]:
        path = Path(os.path.realpath(top))
        for place in (path, *path.parents):
            try:
                mode = os.stat(place).st_mode
            except OSError:
                return True
            if not mode & 0o001 or (place == path and not mode & 0o004):
                return True
    return False


def _is_checkout(path: Path) -> bool:
    """A source tree of the kit: a clone, an unpacked sdist."""
    try:
        return (path / "grader" / "sandbox").is_dir() and ((path / "solutions").is_dir() or (path / "pyproject.toml").is_file())
    except OSError:
        return False


@cache
def kit_copies() -> tuple[str, ...]:
    """Every copy of the kit this interpreter can find: the package in use, its checkout, a ``grader``
    package in any sys.path directory (a wheel, or what an editable install left there), the source
    of an editable install, and a clone holding the virtual environment we run in."""
    found = {PACKAGE_DIR}
    places = [Path(p) for p in [*sys.path, sys.prefix, os.path.dirname(sys.executable)] if p]
    for place in places:
        for candidate in (place, *place.parents):
            if _is_checkout(candidate):
                found.add(candidate)
        package = place / "grader"
        if (package / "sandbox").is_dir() or (package / "_kit").is_dir():
            found.add(package)
    for site in _all_site_dirs():
        package = Path(site) / "grader"
        if (package / "sandbox").is_dir() or (package / "_kit").is_dir():
            found.add(package)
    meta = _metadata_dirs(_site_dirs()).get("attention_kit")
    url = re.search(r'"url":\s*"file://([^"]+)"', _read(meta, "direct_url.json")) if meta else None
    if url:  # an editable install's source tree
        found.add(Path(url[1]))
    real = {os.path.realpath(p) for p in found if os.path.isdir(p)}
    return tuple(sorted(real))


def secret_files(copies: tuple[str, ...] | None = None) -> list[str]:
    """One file of each kind a worker must not read, in every copy: reference solutions, hidden suites,
    the exercise metadata."""
    out = []
    for copy in copies if copies is not None else kit_copies():
        base = Path(copy)
        for pattern in ("solutions/*.py", "_kit/solutions/*.py", "grader/_kit/solutions/*.py", "suites/*.py",
                        "grader/suites/*.py", "exercises/info.toml", "_kit/exercises/info.toml"):
            hit = next(iter(sorted(base.glob(pattern))), None)
            if hit is not None:
                out.append(str(hit))
    return list(dict.fromkeys(out))


def cover_targets(hidden: tuple[str, ...] = ()) -> list[str]:
    """What to cover with empty mounts when there is no private root: each copy of the kit and each hidden
    directory (a pack), or for a checkout each of its top-level entries except one holding the Python we
    run (a .venv in the clone)."""
    keep = [os.path.abspath(sys.prefix), *allowed_paths()]
    out = [h for h in hidden if os.path.isdir(h)]
    for copy in kit_copies():
        if not any(_under(k, [copy]) for k in keep):
            out.append(copy)
            continue
        for entry in sorted(os.listdir(copy)):
            path = os.path.join(copy, entry)
            if os.path.isdir(path) and not any(_under(k, [path]) for k in keep):
                out.append(path)
    return out


def binds(hidden: tuple[str, ...] = ()) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """(bind mounts as (source, target), symlinks as (target, link), directories to empty first) for the
    private root. A site-packages directory, a copy of the kit or a hidden directory (a pack) that lies
    inside a bound directory (under /usr, or inside the standard library of a pyenv Python) is emptied,
    and only the allowed paths bound back into it."""
    out: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    for name in SYSTEM_DIRS:
        path = "/" + name
        if os.path.islink(path):
            links.append((os.readlink(path), path))
        elif os.path.isdir(path):
            out.append((path, path))
    if os.path.isfile("/etc/ld.so.cache"):
        out.append(("/etc/ld.so.cache", "/etc/ld.so.cache"))  # dlopen by name
    for path in stdlib_dirs():
        if not _under(path, [t for _, t in out]):
            out.append((os.path.realpath(path), path))
    tops = [t for _, t in out]
    empty = [site for site in _all_site_dirs() if _under(site, tops)]
    for path in [*kit_copies(), *hidden]:
        if _under(path, tops) and not _under(path, empty):
            empty.append(path)
    for path in allowed_paths():
        out.append((os.path.realpath(path), path))
    return out, links, empty


def holes(hidden: tuple[str, ...] = ()) -> list[str]:
    """What a worker must not read even inside an allowed directory: every package directory, every copy
    of the kit and the hidden directories, as real paths (the allowed entries are granted on their own)."""
    paths = [*_all_site_dirs(), *kit_copies(), *hidden]
    return sorted({os.path.realpath(p) for p in paths} | {os.path.abspath(p) for p in paths})


def readable(top: str, holes: list[str]) -> list[str]:
    """What beneath top a worker may read whole: top itself when no hole lies inside it, else every entry
    on the way to a hole but the hole, as real paths. Symbolic links are left out (what they lead to is
    granted under its own name, or not at all); a directory that cannot be listed grants nothing."""
    real = os.path.realpath(top)
    inside = [h for h in holes if h.startswith(real.rstrip("/") + "/")]
    if not inside:
        return [real]
    try:
        entries = sorted(os.scandir(real), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for entry in entries:
        if entry.path in inside or entry.is_symlink():
            continue
        out += readable(entry.path, inside) if entry.is_dir(follow_symlinks=False) else [entry.path]
    return out


def _under(path: str, tops: list[str]) -> bool:
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in tops)
