"""Runtime isolation of a worker process: the layer that holds when the static policy is bypassed.

Two entry points, called on both spawn paths (a fresh interpreter, or a fork of the zygote):

* ``isolate_child(limits)`` runs in the new process before the worker boots (``preexec_fn`` of the
  spawn, or the zygote's forked child): resource limits, death signal, no new privileges, a new
  network namespace.
* ``after_boot()`` runs in the worker once torch and the worker module are imported and before the
  submission is: it takes away what the submission must not have. In order, where the OS allows:

  1. a private mount namespace whose root holds only what a booted worker still needs (the system
     directories, the Python library directories, a few device nodes and the worker's own
     directory); the kit checkout, the installed ``grader`` package (hidden suites, reference
     solutions), other submissions, /proc, /tmp and home directories are simply not there.
     As root this is a plain mount namespace; otherwise an unprivileged user namespace is tried.
     If the private root cannot be built, the kit's directories are covered with empty mounts.
  2. a fresh identity: as root, a uid/gid of its own (``UID_BASE + pid``, so no two live workers
     share one and none shares the grader's), no supplementary groups, no capabilities; in a user
     namespace, every capability is dropped.
  3. not dumpable (no ptrace or /proc/PID/mem access from same-uid processes), no new privileges,
     the death signal set again (a credential change clears it).
  4. a seccomp filter (x86_64 and aarch64): no signals to other processes, no setsid/setpgid (so
     the grader's process-group kill reaches every descendant), no sockets, no ptrace or
     process_vm_*, no namespaces, mounts, io_uring, bpf, perf or kernel keyrings.

Every step degrades to a recorded fallback, never to a crash; ``STATE`` says what held, and
``python -m grader.sandbox.isolation`` checks it from the outside on this machine (see SECURITY.md).
The grader side calls ``protect_grader()`` before starting a worker and ``reap(pid)`` when it ends one.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import signal
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_PARENT = 0x00008000
NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2

UID_BASE = 1_800_000_000  # a worker started as root runs as uid/gid UID_BASE + its pid (unused ids on most systems)
NOBODY = 65534  # the last fallback identity, shared by workers
SMALL_UID_BASE, SMALL_UID_SPAN = 20000, 40000  # where only 65536 ids are mapped (a user-namespaced container)

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the grader package: hidden suites, installed solutions
KIT_PARENT = PACKAGE_DIR.parent  # a checkout (solutions/, tests/, .git) or a site-packages directory
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")

# syscall numbers by machine (x86_64 from asm/unistd_64.h, aarch64 from asm-generic/unistd.h)
_SYSCALLS = {
    "x86_64": dict(
        arch=0xC000003E, kill=62, tkill=200, tgkill=234, rt_sigqueueinfo=129, rt_tgsigqueueinfo=297,
        pidfd_send_signal=424, pidfd_getfd=438, setsid=112, setpgid=109, ptrace=101, process_vm_readv=310,
        process_vm_writev=311, socket=41, io_uring_setup=425, io_uring_enter=426, io_uring_register=427,
        clone=56, clone3=435, unshare=272, setns=308, mount=165, umount2=166, pivot_root=155, chroot=161,
        bpf=321, perf_event_open=298, userfaultfd=323, keyctl=250, add_key=248, request_key=249,
        kexec_load=246, kexec_file_load=320, init_module=175, finit_module=313, delete_module=176,
        open_tree=428, move_mount=429, fsopen=430, fsconfig=431, fsmount=432, fspick=433, mount_setattr=442,
        seccomp=317,
    ),
    "aarch64": dict(
        arch=0xC00000B7, kill=129, tkill=130, tgkill=131, rt_sigqueueinfo=138, rt_tgsigqueueinfo=240,
        pidfd_send_signal=424, pidfd_getfd=438, setsid=157, setpgid=154, ptrace=117, process_vm_readv=270,
        process_vm_writev=271, socket=198, io_uring_setup=425, io_uring_enter=426, io_uring_register=427,
        clone=220, clone3=435, unshare=97, setns=268, mount=40, umount2=39, pivot_root=41, chroot=51,
        bpf=280, perf_event_open=241, userfaultfd=282, keyctl=219, add_key=217, request_key=218,
        kexec_load=104, kexec_file_load=294, init_module=105, finit_module=273, delete_module=106,
        open_tree=428, move_mount=429, fsopen=430, fsconfig=431, fsmount=432, fspick=433, mount_setattr=442,
        seccomp=277,
    ),
}
SYSCALLS = _SYSCALLS.get(platform.machine())

# What after_boot achieved in this process, one line per protection (read by the self-check).
STATE: dict[str, str] = {}


@dataclass(frozen=True)
class Limits:
    wall_s: float = 30.0  # one budget for the whole grading session of a submission
    cpu_s: int = 60
    memory_mb: int = 2048  # address space; torch itself maps about 0.6 GB
    file_mb: int = 4
    output_kb: int = 8  # what the submission prints, as kept for --verbose and reports
    processes: int = 64  # processes + threads of the worker's own uid (enforced when it has one: root)


def worker_uid(pid: int) -> int:
    """The uid (and gid) a worker with this pid runs as when the grader is root."""
    return UID_BASE + pid


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    libc.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
    libc.unshare.argtypes = (ctypes.c_int,)
    libc.syscall.restype = ctypes.c_long
    return libc


def _ok(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


# -- before the worker boots ---------------------------------------------------------------------

def isolate_child(limits: Limits) -> None:
    """Runs in the new worker process before it boots: limits, death signal, no network where allowed."""
    mb = 1 << 20
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb, limits.memory_mb * mb))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * mb, limits.file_mb * mb))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.geteuid() == 0:
        # Not enforced while the worker is root; it is from the moment after_boot gives it a uid of its
        # own (it counts processes and threads per uid, so it would be meaningless on a shared uid).
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    libc = _libc()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binary can raise the worker's privileges
    libc.unshare(CLONE_NEWNET)  # needs root; otherwise after_boot tries a user namespace, then seccomp


# -- in the booted worker, before the submission -------------------------------------------------

def after_boot() -> dict[str, str]:
    """Take away what the submission must not have; returns (and records in STATE) what held.

    Must run in the worker's own directory (its cwd), single-threaded, before the submission is imported.
    """
    libc = _libc()
    parent = os.getppid()
    root = os.geteuid() == 0
    uid = worker_uid(os.getpid())
    STATE.clear()
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads > 1:
        STATE["threads"] = f"{threads} threads at boot: namespaces apply to the main thread only"

    private = _private_namespace(libc, root)
    STATE["network"] = _network_state()  # read now: the private root has no /proc
    if private and _gpu_devices():
        # CUDA/ROCm need their device nodes, /proc and /sys, which the private root leaves out
        STATE["files"] = _hide_kit(libc) + " (a GPU is present: the private root is not used)"
    elif private:
        try:
            STATE["files"] = _private_root(libc)
        except OSError as exc:
            STATE["files"] = _hide_kit(libc) + f" (private root failed: {exc.strerror or exc})"
    else:
        STATE["files"] = "shared file system: the worker reads what its uid may read (no private mount namespace)"

    STATE["identity"] = _drop_identity(libc, root, uid, private)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # cleared by the credential change above
    if os.getppid() != parent:  # the grader died before the death signal was set again
        os._exit(0)
    STATE["syscalls"] = _install_seccomp(libc)
    return dict(STATE)


def _gpu_devices() -> list[str]:
    try:
        return [n for n in os.listdir("/dev") if n.startswith("nvidia") or n in ("kfd", "dxg")]
    except OSError:
        return []


def _network_state() -> str:
    try:
        with open("/proc/self/net/dev", encoding="ascii") as f:
            names = [line.split(":")[0].strip() for line in f.readlines()[2:]]
    except OSError:
        return "unknown (no /proc)"
    if names and set(names) <= {"lo"}:
        return "own network namespace: loopback only"
    return "host network (sockets are refused by seccomp where it is on)"


def _private_namespace(libc, root: bool) -> bool:
    """Enter a mount namespace of our own in which we may mount; False when the OS does not allow it."""
    if root:
        if libc.unshare(CLONE_NEWNS) != 0:
            return False
    else:
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) != 0:
            return False
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
                    f.write(text)
        except OSError:
            pass  # unmapped ids still allow mounting; files the worker creates show as the overflow id
    try:
        _ok(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    except OSError:
        return False  # in a new namespace already, but nothing we mount must reach the host: mount nothing
    return True


def _give_workdir(uid: int) -> None:
    """The worker's directory (and the submission in it) belong to the worker's uid, so it can work there."""
    for name in [".", *os.listdir(".")]:
        try:
            os.chown(name, uid, uid, follow_symlinks=False)
        except OSError:
            pass


def _is_checkout(path: str) -> bool:
    """A directory holding the kit's own package without torch beside it: a checkout, never bound."""
    p = Path(path)
    try:
        return (p / "grader" / "sandbox" / "isolation.py").is_file() and not (p / "torch").is_dir()
    except OSError:
        return False


def _view() -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """(bind mounts as (source, target), symlinks as (target, link), paths to cover) for the private root."""
    binds: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    for name in SYSTEM_DIRS:
        path = "/" + name
        if os.path.islink(path):
            links.append((os.readlink(path), path))
        elif os.path.isdir(path):
            binds.append((path, path))
    if os.path.isfile("/etc/ld.so.cache"):
        binds.append(("/etc/ld.so.cache", "/etc/ld.so.cache"))  # dlopen by name
    for entry in sys.path:
        path = os.path.abspath(entry or ".")
        if not os.path.exists(path) or _is_checkout(path) or path == os.getcwd():
            continue
        if any(path == t or path.startswith(t.rstrip("/") + "/") for _, t in binds):
            continue  # under /usr already
        binds.append((os.path.realpath(path), path))
    cover = []
    for secret in (str(PACKAGE_DIR), str(KIT_PARENT) if _is_checkout(str(KIT_PARENT)) else None):
        if secret is None:
            continue
        for candidate in {secret, os.path.realpath(secret)}:
            if any(candidate.startswith(t.rstrip("/") + "/") for _, t in binds):
                cover.append(candidate)
    return binds, links, cover


def _source_flags(path: str) -> int:
    """The mount flags a read-only bind of path must keep (a user namespace refuses to drop locked ones)."""
    flag = os.statvfs(path).f_flag
    out = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                   (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME)):
        if flag & st:
            out |= ms
    return out


def _bind(libc, source: str, target: str, *, readonly: bool, extra: int = 0, recursive: bool = True) -> None:
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    src, dst = os.fsencode(source), os.fsencode(target)
    _ok(libc.mount(src, dst, None, MS_BIND | (MS_REC if recursive else 0), None), f"bind {source}")
    flags = MS_REMOUNT | MS_BIND | _source_flags(source) | extra | (MS_RDONLY if readonly else 0)
    _ok(libc.mount(None, dst, None, flags, None), f"remount {source}")


def _cover(libc, target: str) -> None:
    """Hide a directory under an empty read-only tmpfs."""
    _ok(libc.mount(b"tmpfs", os.fsencode(target), b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   b"size=4k,mode=0555"), f"cover {target}")


def _private_root(libc) -> str:
    """Pivot into a new root that holds only what the booted worker needs, its directory writable."""
    work = os.getcwd()
    binds, links, cover = _view()
    # The new root is a tmpfs mounted over the worker's directory: from then on the path `work` names
    # the new root, and the real directory underneath is reached through a descriptor opened before.
    real = os.open(".", os.O_PATH | os.O_DIRECTORY)
    try:
        _ok(libc.mount(b"tmpfs", os.fsencode(work), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=1m,mode=0755"), "mount tmpfs")
    except OSError:
        os.close(real)
        raise
    try:
        new = work.rstrip("/")
        for source, target in binds:
            _bind(libc, source, new + target, readonly=True, extra=MS_NOSUID)
        for dest, link in links:
            os.symlink(dest, new + link)
        for name in DEVICES:
            if os.path.exists(f"/dev/{name}"):
                _bind(libc, f"/dev/{name}", f"{new}/dev/{name}", readonly=False, extra=MS_NOSUID)
        for target in cover:
            _cover(libc, new + target)
        os.makedirs(new + "/tmp", mode=0o755, exist_ok=True)
        # not recursive: the new root itself is mounted on that directory
        _bind(libc, f"/proc/self/fd/{real}", new + work, readonly=False, extra=MS_NOSUID | MS_NODEV | MS_NOEXEC,
              recursive=False)
        os.chdir(new)
    except BaseException:
        os.chdir(real)
        libc.umount2(os.fsencode(work), MNT_DETACH)
        raise
    finally:
        os.close(real)
    how = "pivot_root"
    pivot = SYSCALLS and libc.syscall(SYSCALLS["pivot_root"], b".", b".")
    if pivot == 0:
        libc.umount2(b".", MNT_DETACH)  # the old root, stacked on "." by pivot_root(".", ".")
    else:  # no pivot (the root is not a mount point, e.g. in a chroot): chroot, unescapable without privileges
        os.chroot(".")
        how = "chroot"
    os.chdir("/")
    libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None)
    os.chdir(work)
    hidden = " (installed kit package covered)" if cover else ""
    return f"private root ({how}): system and Python library directories read-only, own directory writable{hidden}"


def _hide_kit(libc) -> str:
    """Fallback: the whole file system stays visible, but the kit's directories are covered."""
    hidden = []
    for path in {str(PACKAGE_DIR), str(KIT_PARENT) if _is_checkout(str(KIT_PARENT)) else str(PACKAGE_DIR)}:
        try:
            _cover(libc, path)
            hidden.append(path)
        except OSError:
            pass
    return f"kit directories covered: {', '.join(sorted(hidden)) or 'none'}"


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_identity(libc, root: bool, uid: int, private: bool) -> str:
    if root:
        existing = [p for p in sys.path if p and os.path.isdir(p)]  # before the drop: it may hide them
        small = SMALL_UID_BASE + os.getpid() % SMALL_UID_SPAN  # unique among live workers while pids < the span
        for candidate in (uid, small, NOBODY):
            try:
                _give_workdir(candidate)
                os.setgroups([])
                os.setresgid(candidate, candidate, candidate)
                os.setresuid(candidate, candidate, candidate)
            except OSError:
                continue
            closed = [p for p in existing if not os.access(p, os.R_OK | os.X_OK)]
            note = f" (cannot read {', '.join(closed)}: later imports from there fail)" if closed else ""
            if candidate == uid:
                return f"own uid/gid {uid}, no capabilities, at most the limit's processes{note}"
            if candidate == small:
                return (f"own uid/gid {small} (from the small range: ids from {UID_BASE} are not mapped here), "
                        f"no capabilities{note}")
            return f"uid/gid {NOBODY} (nobody), shared with other workers: no uid of its own was allowed{note}"
        return "still root: the uid could not be changed"
    # capabilities held inside a user namespace (even one whose mounts failed): give them all up
    dropped = libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), (_CapData * 2)()) == 0
    if not private:
        return f"the grader's uid {os.getuid()} (not root, no user namespace)"
    if dropped:
        return f"the grader's uid {os.getuid()}, no capabilities (user namespace)"
    return f"the grader's uid {os.getuid()}, capabilities in the user namespace could not be dropped"


# -- seccomp -------------------------------------------------------------------------------------

_LD_W_ABS, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_ARG0 = 16  # offsetof(struct seccomp_data, args[0]), low 32 bits on a little-endian machine


def seccomp_program(pid: int, calls: dict) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions. Denied calls fail with EPERM (clone3: ENOSYS, so libc
    falls back to clone, whose flags the filter can read)."""
    eperm = _ERRNO | errno.EPERM
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ, 1, 0, calls["arch"]), (_RET, 0, 0, eperm), (_LD_W_ABS, 0, 0, 0)]
    if calls["arch"] == 0xC000003E:
        prog += [(_JGE, 0, 1, 0x40000000), (_RET, 0, 0, eperm)]  # the x32 ABI

    def rule(name, block):
        prog.extend([(_LD_W_ABS, 0, 0, 0), (_JEQ, 0, len(block), calls[name]), *block])

    def only_if_arg0(values):  # allowed when the first argument is one of values
        n = len(values)
        return [(_LD_W_ABS, 0, 0, _ARG0), *[(_JEQ, n - i, 0, v & 0xFFFFFFFF) for i, v in enumerate(values)], (_RET, 0, 0, eperm), (_RET, 0, 0, _ALLOW)]

    own = [pid, 0, -pid]  # itself, its own process group (0 and -pgid; the worker leads its group)
    rule("kill", only_if_arg0(own))
    for name in ("tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        rule(name, only_if_arg0([pid]))
    rule("clone", [(_LD_W_ABS, 0, 0, _ARG0), (_JSET, 0, 1, NAMESPACE_FLAGS | CLONE_PARENT), (_RET, 0, 0, eperm),
                   (_RET, 0, 0, _ALLOW)])
    rule("clone3", [(_RET, 0, 0, _ERRNO | errno.ENOSYS)])
    for name in ("tkill", "pidfd_send_signal", "pidfd_getfd", "setsid", "setpgid", "ptrace", "process_vm_readv",
                 "process_vm_writev", "socket", "io_uring_setup", "io_uring_enter", "io_uring_register", "unshare",
                 "setns", "mount", "umount2", "pivot_root", "chroot", "bpf", "perf_event_open", "userfaultfd",
                 "keyctl", "add_key", "request_key", "kexec_load", "kexec_file_load", "init_module", "finit_module",
                 "delete_module", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
                 "mount_setattr"):
        rule(name, [(_RET, 0, 0, eperm)])
    prog.append((_RET, 0, 0, _ALLOW))
    return prog


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _install_seccomp(libc) -> str:
    if SYSCALLS is None:
        return f"no seccomp filter: no syscall table for {platform.machine()}"
    prog = seccomp_program(os.getpid(), SYSCALLS)
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    # SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_TSYNC: every thread of the worker at once
    if libc.syscall(SYSCALLS["seccomp"], 1, 1, ctypes.byref(fprog)) != 0:
        return f"no seccomp filter: {os.strerror(ctypes.get_errno())}"
    return "seccomp filter: no signals to other processes, no setsid/setpgid, sockets, ptrace, namespaces or mounts"


# -- the grader's side ---------------------------------------------------------------------------

def protect_grader() -> None:
    """Make the grading process non-dumpable when it is not root: a worker with the same uid then
    cannot ptrace it or open /proc/<grader>/fd or /mem (writing to its stdout, say). As root the
    workers run under other uids, which already rules that out."""
    if os.geteuid() != 0:
        _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def reap(pid: int) -> int:
    """Kill every process still running under the worker's own uid (root only; a worker of its own
    uid cannot hand it to anyone). Catches a descendant that left the worker's process group.
    Call it after the group kill and before waiting for the worker, so its pid cannot be reused."""
    if os.geteuid() != 0:
        return 0
    uid = str(worker_uid(pid))
    killed = 0
    for _ in range(10):
        found = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/status", "rb") as f:
                    for line in f:
                        if line.startswith(b"Uid:"):
                            if line.split()[1].decode() == uid:
                                os.kill(int(entry.name), signal.SIGKILL)
                                found += 1
                            break
            except (OSError, ValueError):
                continue
        killed += found
        if not found:
            break
    return killed


# -- a self-check, run from the outside: `python -m grader.sandbox.isolation` ----------------------

PROBE = r'''
import json, os, socket, sys
import torch
from grader.sandbox import isolation
report = {"state": isolation.STATE}
def attempt(name, fn):
    try:
        fn()
        report[name] = "ALLOWED"
    except BaseException as exc:
        report[name] = f"refused ({type(exc).__name__}: {exc})"[:160]
attempt("read the kit (reference solutions, hidden suites)", lambda: open(os.environ["KIT_PROBE"]).read())
attempt("write outside its directory", lambda: open(os.environ["WRITE_PROBE"], "w").write("x"))
attempt("signal the grader", lambda: os.kill(os.getppid(), 0))
attempt("open a socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("1.1.1.1", 53)))
attempt("leave its process group (setsid)", lambda: os.setsid())
print("ISOLATION-REPORT " + json.dumps(report), flush=True)
'''


def self_check(kit_file: Path | None = None) -> list[tuple[str, str]]:
    """Start a real worker with a probe that tries what a hostile submission would; returns (what, result).

    kit_file: a private file the worker must not read (default: a reference solution beside the package).
    """
    import json
    import tempfile
    import time

    from grader.sandbox.session import Sandbox

    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.py"
        solutions = [PACKAGE_DIR / "_kit" / "solutions", PACKAGE_DIR.parent / "solutions"]
        kit_file = kit_file or next((f for d in solutions for f in sorted(d.glob("*.py"))), PACKAGE_DIR / "__init__.py")
        marker = Path(tempfile.gettempdir()) / f"attention-kit-probe-{os.getpid()}"
        source = PROBE.replace('os.environ["KIT_PROBE"]', repr(str(kit_file)))
        probe.write_text(source.replace('os.environ["WRITE_PROBE"]', repr(str(marker))))
        with Sandbox(probe, limits=Limits(wall_s=30)) as sb:
            try:
                sb.request({"op": "load"})
            except Exception as exc:  # noqa: BLE001 - shown to the person running the check
                return [("probe", f"the probe failed: {exc}")]
            for _ in range(100):
                if "ISOLATION-REPORT" in sb.captured_output():
                    break
                time.sleep(0.02)
        text = sb.captured_output().split("ISOLATION-REPORT ", 1)[-1].splitlines()[0]
        wrote = marker.exists()
        marker.unlink(missing_ok=True)
    report = json.loads(text)
    rows = [(k, v) for k, v in report.pop("state").items()]
    rows += [(k, v) for k, v in report.items()]
    if wrote:
        rows.append(("file written outside its directory", f"FOUND {marker}"))
    return rows


def main() -> None:
    print(f"running as uid {os.geteuid()} on {platform.machine()}; a worker here gets:")
    for what, result in self_check():
        print(f"  {what:<52} {result}")


if __name__ == "__main__":
    main()
