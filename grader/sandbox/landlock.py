"""Landlock: the worker's file-system allowlist enforced by the kernel, without any privilege.

Where the private root cannot be built (root without CAP_SYS_ADMIN, as in Docker; a non-root grader
without user namespaces) this is what keeps the kit, other submissions and the rest of the disk out of
reach: reading only beneath the allowlist of ``view.binds`` (listing directory names beneath the
site-packages directories), writing only beneath the worker's own directory and to a few devices.
With a private root it applies too, as a second layer. Needs Linux 5.13 or later with Landlock enabled.
"""
from __future__ import annotations

import ctypes
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


def restrict(workdir: str) -> str:
    """Restrict this process (single-threaded) to the allowlist; returns what held, never raises."""
    if NR is None:
        return f"no Landlock: unknown system call numbers on {platform.machine()}"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(NR[0], None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        return f"no Landlock: {os.strerror(ctypes.get_errno())}"
    handled = _handled(abi)
    attr = ctypes.c_uint64(handled)  # struct landlock_ruleset_attr, its first field only (every ABI takes that)
    ruleset = libc.syscall(NR[0], ctypes.byref(attr), 8, 0)
    if ruleset < 0:
        return f"no Landlock: {os.strerror(ctypes.get_errno())}"
    binds, _, empty = view.binds()
    rules = [(target, EXECUTE | READ_FILE | READ_DIR) for _, target in binds]
    rules += [(site, READ_DIR) for site in empty + view._site_dirs()]  # names only: imports scan these
    rules += [(f"/dev/{name}", READ_FILE | WRITE_FILE) for name in DEVICES]
    rules += [(workdir, handled & ~EXECUTE)]
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent here (a device, a library directory): nothing to allow
            try:
                if not os.path.isdir(path):
                    rights &= FILE_RIGHTS
                rule = _PathBeneath(rights & handled, fd)
                if libc.syscall(NR[1], ruleset, 1, ctypes.byref(rule), 0) != 0:
                    return f"no Landlock: rule for {path}: {os.strerror(ctypes.get_errno())}"
            finally:
                os.close(fd)
        if libc.syscall(NR[2], ruleset, 0) != 0:
            return f"no Landlock: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(ruleset)
    return f"Landlock (ABI {abi}): reads only the allowlist, writes only its own directory"
