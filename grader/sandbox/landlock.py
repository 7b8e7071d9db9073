"""Landlock: the worker's file-system allowlist enforced by the kernel, without any privilege.

Where the private root cannot be built (root without CAP_SYS_ADMIN, as in Docker; a non-root grader
without user namespaces) this is what keeps the kit, other submissions and the rest of the disk out of
reach: reading only beneath the allowlist of ``view.binds`` (listing directory names beneath the
site-packages directories), writing only beneath the worker's own directory and to a few devices.
An allowed directory that holds a site-packages directory, a copy of the kit or a pack (/usr in the
python Docker images, a pyenv's standard library) is granted entry by entry around it, so the kit
stays unreadable wherever it is installed. With a private root it applies too, as a second layer.
Needs Linux 5.13 or later with Landlock enabled; from ABI 6 (Linux 6.12) the worker also cannot signal
processes outside its domain, nor reach abstract Unix sockets made outside it.
"""
from __future__ import annotations

import ctypes
import functools
import os
import platform

from grader.sandbox import view

NR = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}.get(platform.machine())  # create, add_rule, restrict
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
DEVICES = ("null", "zero", "full", "random", "urandom")


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _handled(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if abi >= 2:
        rights |= 1 << 13  # refer
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2  # ABI 6


class _RulesetAttr(ctypes.Structure):  # struct landlock_ruleset_attr as of ABI 6
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def rules(workdir: str, handled: int, hidden: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    """(path, rights): the allowlist of view.binds, where a directory holding site-packages, a copy of
    the kit or a hidden one is readable only entry by entry around it (its names stay listable)."""
    return [*allowlist(tuple(hidden)), (workdir, handled & ~EXECUTE)]


@functools.cache
def allowlist(hidden: tuple[str, ...] = ()) -> tuple[tuple[str, int], ...]:
    """rules() but the worker's own directory. Listing the directories around the holes costs a worker ~7 ms: the
    fork server works it out once, before its first fork (zygote.serve), on the host's view, whose bound directories
    the private root shows unchanged (a path it lacks is skipped when the rule is added)."""
    binds, _, empty = view.binds(hidden)
    holes = view.holes(hidden)
    out = []
    for _, target in binds:
        out += [(target, READ_DIR)] + [(path, EXECUTE | READ_FILE | READ_DIR) for path in view.readable(target, holes)]
    out += [(site, READ_DIR) for site in empty + view._site_dirs()]  # names only: imports scan these
    out += [(f"/dev/{name}", READ_FILE | WRITE_FILE) for name in DEVICES]
    return tuple(out)


def restrict(workdir: str, hidden: tuple[str, ...] = (), files: bool = True) -> tuple[str, str]:
    """Restrict this process (single-threaded) to the allowlist (files=False: scoping only), and where the
    kernel has it (ABI 6) keep signals and abstract Unix sockets inside its domain. Returns what held for
    the files and for the scoping; never raises."""
    if NR is None:
        why = f"unknown system call numbers on {platform.machine()}"
        return f"no Landlock: {why}", f"no Landlock scoping: {why}"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(NR[0], None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        why = os.strerror(ctypes.get_errno())
        return f"no Landlock: {why}", f"no Landlock scoping: {why}"
    handled = _handled(abi) if files else 0
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    scope = (f"Landlock scoping (ABI {abi}): no signals and no abstract Unix sockets beyond its own domain "
             "(the grader, the fork server, other workers)" if scoped else
             f"no Landlock scoping: the kernel's Landlock ABI {abi} is older than 6")
    told = "no Landlock: a CUDA grade needs /proc, /sys and its device files"
    if not handled and not scoped:
        return told, scope
    attr = _RulesetAttr(handled, 0, scoped)
    ruleset = libc.syscall(NR[0], ctypes.byref(attr), ctypes.sizeof(attr) if abi >= 6 else 8, 0)
    if ruleset < 0:
        why = os.strerror(ctypes.get_errno())
        return f"no Landlock: {why}", f"no Landlock scoping: {why}"
    try:
        failed = _add_rules(libc, ruleset, rules(workdir, handled, hidden) if handled else [], handled)
        if failed:
            return f"no Landlock: {failed}", "no Landlock scoping: the ruleset was not applied"
        if libc.syscall(NR[2], ruleset, 0) != 0:
            why = os.strerror(ctypes.get_errno())
            return f"no Landlock: {why}", f"no Landlock scoping: {why}"
    finally:
        os.close(ruleset)
    if not handled:
        return told, scope
    return (f"Landlock (ABI {abi}): reads only the allowlist (site-packages, the kit and packs carved out entry by "
            "entry), writes only its own directory"), scope


def _add_rules(libc, ruleset: int, rules: list[tuple[str, int]], handled: int) -> str:
    """Add each rule; the first failure, or ''."""
    for path, rights in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # absent here (a device, a library directory): nothing to allow
        try:
            if not os.path.isdir(path):
                rights &= FILE_RIGHTS
            if not rights & handled:
                continue  # listing a file: nothing to allow
            rule = _PathBeneath(rights & handled, fd)
            if libc.syscall(NR[1], ruleset, 1, ctypes.byref(rule), 0) != 0:
                return f"rule for {path}: {os.strerror(ctypes.get_errno())}"
        finally:
            os.close(fd)
    return ""
