"""Runtime isolation of a worker process: the layer that holds when the static policy is bypassed.

Two entry points, called on both spawn paths (a fresh interpreter, or a fork of the zygote):

* ``isolate_child(limits, cgroup)`` runs in the new process before the worker boots (``preexec_fn``
  of the spawn, or the zygote's forked child): its cgroup v2 where the grader made one, resource
  limits, death signal, no new privileges, a new network namespace.
* ``after_boot()`` runs in the worker once torch and the worker module are imported and before the
  submission is: it takes away what the submission must not have. In order, where the OS allows:

  1. a private mount namespace whose root holds an allowlist (``view.binds``): the system
     directories, the standard library, the site-packages entries of torch, numpy, safetensors
     and their requirements, a few device nodes and the worker's own directory. No copy of the
     kit, no other submission, no /proc, /tmp or home directory is there. As root this is a plain
     mount namespace; otherwise an unprivileged user namespace is tried. If the private root
     cannot be built, every copy of the kit found is covered with an empty mount.
  2. a fresh identity: as root, a uid/gid of its own (``UID_BASE + pid``), no supplementary groups,
     no capabilities; in a user namespace, every capability is dropped.
  3. not dumpable, no new privileges, the death signal set again (a credential change clears it).
  4. a seccomp filter built with libseccomp (``pyseccomp``), an allowlist (ALLOWED_CALLS,
     RESTRICTED_CALLS): every other call, and other architectures' calls, fail with EPERM.

Every step degrades to a recorded fallback, never to a crash; ``STATE`` says what held, and
``python -m grader.sandbox`` checks it from the outside on this machine (see SECURITY.md).
The grader side calls ``protect_grader()`` before starting a worker and ``reap(pid)`` when it ends one.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import itertools
import os
import platform
import resource
import signal
import sys
import termios
import threading

from grader.sandbox import landlock, view
from grader.sandbox.limits import Limits

try:  # libseccomp through ctypes; loaded before any fork, so every worker has it
    import pyseccomp
    SECCOMP_ERROR = ""
except (ImportError, OSError, RuntimeError) as exc:  # no libseccomp on this machine: a documented weaker tier
    pyseccomp = None
    SECCOMP_ERROR = f"{type(exc).__name__}: {exc}"

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_PARENT = 0x00008000
CLONE_NEWIPC = 0x08000000
CLONE_THREAD = 0x00010000
NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS = 38, 39

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2

UID_BASE = 1_800_000_000  # a worker started as root runs as uid/gid UID_BASE + its pid (unused ids on most systems)
NOBODY = 65534  # the last fallback identity, shared by workers
SMALL_UID_BASE, SMALL_UID_SPAN = 20000, 40000  # where only 65536 ids are mapped (a user-namespaced container)

PACKAGE_DIR = view.PACKAGE_DIR
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
DEVICES = ("null", "zero", "full", "random", "urandom")

# -- the worker's system calls: an allowlist, everything else fails with EPERM (seccomp_filter) ---------
# The first line is what booted workers were recorded making once the filter is loaded, grading the
# solutions, skeletons and dev corpus on both spawn paths plus probes for threads, a traceback and a failed
# allocation: `python .ci/record_syscalls.py` (strace -f), which also fails if an honest worker makes a call
# this list refuses. The rest were not seen there: the same families' fallbacks (exit paths, signal return,
# time without the vDSO, fstat and directory listing for a lazy import) and reading its own identity.
ALLOWED_CALLS = (
    "read", "write", "openat", "close", "lseek", "newfstatat", "mmap", "munmap", "mremap", "mprotect", "madvise",
    "brk", "futex", "set_robust_list", "rseq", "gettid", "rt_sigaction", "rt_sigprocmask", "clock_nanosleep", "exit",
    "exit_group", "rt_sigreturn", "restart_syscall", "sigaltstack", "clock_gettime", "clock_getres", "gettimeofday",
    "nanosleep", "sched_yield", "fstat", "statx", "getdents64", "readlink", "getcwd", "pread64", "readv", "writev",
    "getrandom", "getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getpgrp",
)
SELF = "self"  # in RESTRICTED_CALLS: the worker's own pid (its thread group)
# Calls allowed only with these arguments: {argument index: allowed values}; every listed argument must match.
RESTRICTED_CALLS: dict[str, dict[int, tuple]] = {
    **{name: {0: (SELF,)} for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")},
    **{name: {0: (0, SELF)} for name in ("prlimit64", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
                                         "sched_setparam", "sched_getscheduler", "sched_setscheduler", "getsid",
                                         "getpgid")},
    **{name: {0: (os.PRIO_PROCESS,), 1: (0, SELF)} for name in ("getpriority", "setpriority")},
    "fcntl": {1: (fcntl.F_GETFD, fcntl.F_SETFD, fcntl.F_GETFL, fcntl.F_SETFL, fcntl.F_DUPFD, fcntl.F_DUPFD_CLOEXEC)},
    "ioctl": {1: (termios.TCGETS, termios.TIOCGWINSZ, termios.FIONREAD, termios.FIONBIO, termios.FIOCLEX,
                  termios.FIONCLEX)},
    "prctl": {0: (PR_GET_DUMPABLE, PR_GET_NO_NEW_PRIVS)},
}
# And clone for a thread only (CLONE_THREAD, no namespace flag, not CLONE_PARENT); clone3 answers ENOSYS.
# So fork/vfork/execve, sockets, SysV IPC, POSIX message queues, inotify/fanotify, mkdir/unlink/rename,
# chmod/chown, ptrace, process_vm_*, pidfd_*, setsid/setpgid, namespaces, mounts, io_uring, bpf, perf,
# userfaultfd, keyrings, modules, kexec, personality, setting the clock and every call added to the kernel
# later are refused.

# What after_boot achieved in this process, one line per protection (read by the self-check).
STATE: dict[str, str] = {}
CUDA_VIEW = "a CUDA grade: no private root, /proc and /sys visible"


def worker_uid(pid: int) -> int:
    """The uid (and gid) a worker with this pid runs as when the grader is root."""
    return UID_BASE + pid


@functools.cache  # once in the fork server: its workers inherit it
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

def isolate_child(limits: Limits, cgroup: str | None = None) -> None:
    """Runs in the new worker process before it boots: its cgroup (a directory the grader made, or None),
    limits, death signal, no network where allowed."""
    if cgroup:
        try:
            with open(os.path.join(cgroup, "cgroup.procs"), "w", encoding="ascii") as f:
                f.write("0")
        except OSError:
            pass  # the grader reports the tier from the cgroup it made; the rlimits below hold regardless
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
    # no network, and SysV IPC and POSIX queues of its own; needs root, otherwise after_boot tries a user namespace
    libc.unshare(CLONE_NEWNET | CLONE_NEWIPC)


# -- in the booted worker, before the submission -------------------------------------------------

def after_boot(limits: Limits = Limits()) -> dict[str, str]:
    """Take away what the submission must not have; returns (and records in STATE) what held.

    Must run in the worker's own directory (its cwd), single-threaded, before the submission is imported.
    limits.device decides the view: a CUDA grade on a GPU machine keeps the host's file system (the kit
    and limits.hidden covered) and no Landlock file rules; a CPU grade gets everything, GPU or not.
    """
    libc = _libc()
    parent = os.getppid()
    root = os.geteuid() == 0
    uid = worker_uid(os.getpid())
    hidden = tuple(limits.hidden)
    STATE.clear()
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads > 1:
        STATE["threads"] = f"{threads} threads at boot: namespaces apply to the main thread only"

    STATE["limits"] = _cgroup_state()  # read now: the private root has no /proc
    private = _private_namespace(libc, root)
    STATE["network"] = _network_state()
    cuda = limits.device == "cuda" and bool(gpu_devices())  # CUDA needs its device nodes, /proc and /sys
    if private and cuda:
        STATE["files"] = _hide_kit(libc, hidden) + f" ({CUDA_VIEW})"
    elif private:
        try:
            STATE["files"] = _private_root(libc, hidden)
        except OSError as exc:
            STATE["files"] = _hide_kit(libc, hidden) + f" (private root failed: {exc.strerror or exc})"
    else:
        STATE["files"] = "shared file system: the worker reads what its uid may read (no private mount namespace)"

    STATE["landlock"], STATE["scoped"] = landlock.restrict(os.getcwd(), hidden, files=not cuda)
    STATE["identity"] = _drop_identity(libc, root, uid, private)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # cleared by the credential change above
    if os.getppid() != parent:  # the grader died before the death signal was set again
        os._exit(0)
    STATE["syscalls"] = _install_seccomp()
    if not STATE["limits"].startswith("cgroup v2") and STATE["syscalls"].startswith("seccomp"):
        STATE["limits"] += "; one process (fork refused by seccomp), so the address-space limit is per submission"
    return dict(STATE)


def _cgroup_state() -> str:
    try:
        with open("/proc/self/cgroup", encoding="ascii") as f:
            own = next((line.split(":", 2)[2].strip() for line in f if line.startswith("0::")), "")
    except OSError:
        own = ""
    if "/attention-kit-" in own:
        return f"cgroup v2 {own}: memory, processes and CPU limited for the whole submission"
    return "no cgroup of its own: per-process limits (address space, CPU time, file size)"


def gpu_devices() -> list[str]:
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
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) != 0:
            return False
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # a worker forked from the non-dumpable zygote: /proc/self is root's
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
                    f.write(text)
        except OSError:
            pass  # unmapped ids still allow mounting; files the worker creates show as the overflow id
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    try:
        _ok(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    except OSError:
        return False  # in a new namespace already, but nothing we mount must reach the host: mount nothing
    return True


def namespaces_allowed() -> bool:
    """Whether a worker forked from here could enter a mount namespace of its own (for its private root): tried
    in a child that exits at once."""
    pid = os.fork()
    if pid == 0:
        flags = CLONE_NEWNS if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNS
        os._exit(0 if _libc().unshare(flags) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def _give_workdir(uid: int) -> None:
    """The worker's directory (and the submission in it) belong to the worker's uid, so it can work there."""
    for name in [".", *os.listdir(".")]:
        try:
            os.chown(name, uid, uid, follow_symlinks=False)
        except OSError:
            pass


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


def _private_root(libc, hidden: tuple[str, ...] = ()) -> str:
    """Pivot into a new root that holds only what the booted worker needs, its directory writable."""
    work = os.getcwd()
    binds, links, empty = view.binds(hidden)
    inside = [b for b in binds if view._under(b[1], empty)]  # bound into an emptied directory, after it
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
            if (source, target) not in inside:
                _bind(libc, source, new + target, readonly=True, extra=MS_NOSUID)
        for target in empty:
            _ok(libc.mount(b"tmpfs", os.fsencode(new + target), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=64k,mode=0755"),
                f"empty {target}")
        for source, target in inside:
            _bind(libc, source, new + target, readonly=True, extra=MS_NOSUID)
        for target in empty:
            _ok(libc.mount(None, os.fsencode(new + target), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None),
                f"read-only {target}")
        for dest, link in links:
            os.symlink(dest, new + link)
        for name in DEVICES:
            if os.path.exists(f"/dev/{name}"):
                _bind(libc, f"/dev/{name}", f"{new}/dev/{name}", readonly=False, extra=MS_NOSUID)
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
    pivot = SYS_PIVOT_ROOT and libc.syscall(SYS_PIVOT_ROOT, b".", b".")
    if pivot == 0:
        libc.umount2(b".", MNT_DETACH)  # the old root, stacked on "." by pivot_root(".", ".")
    else:  # no pivot (the root is not a mount point, e.g. in a chroot): chroot, unescapable without privileges
        os.chroot(".")
        how = "chroot"
    os.chdir("/")
    libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None)
    os.chdir(work)
    return (f"private root ({how}): system directories, the standard library and {len(view.allowed_paths())} "
            "allowed package paths read-only, own directory writable")


def _hide_kit(libc, hidden: tuple[str, ...] = ()) -> str:
    """Fallback: the whole file system stays visible, but the kit's directories (and packs) are covered."""
    covered, failed = [], []
    for path in sorted(view.cover_targets(hidden)):
        if view._under(path, covered):
            continue  # inside a directory covered already
        try:
            _cover(libc, path)
            covered.append(path)
        except OSError:
            failed.append(path)
    if failed:
        return f"kit directories NOT all covered: {', '.join(sorted(failed))} stay visible"
    return f"kit directories covered: {', '.join(sorted(covered)) or 'none'}"


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


# -- seccomp ---

def seccomp_filter(pid: int):
    """The worker's filter (libseccomp): ALLOWED_CALLS, RESTRICTED_CALLS with those arguments only (SELF is
    pid), clone for threads only, clone3 ENOSYS (libc falls back to clone, whose flags a filter can read);
    every other call fails with EPERM, and so does every call of another architecture (x32, 32-bit)."""
    eperm, allow = pyseccomp.ERRNO(errno.EPERM), pyseccomp.ALLOW
    f = pyseccomp.SyscallFilter(eperm)
    f.set_attr(pyseccomp.Attr.ACT_BADARCH, eperm)
    f.set_attr(pyseccomp.Attr.CTL_TSYNC, 1)  # every thread of the worker at once
    for name in ALLOWED_CALLS:
        _add(f, allow, name)
    for name, rules in RESTRICTED_CALLS.items():
        for values in itertools.product(*rules.values()):
            _add(f, allow, name, *(_arg(i, pid if v is SELF else v) for i, v in zip(rules, values)))
    _add(f, allow, "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, CLONE_THREAD | NAMESPACE_FLAGS | CLONE_PARENT,
                                          CLONE_THREAD))
    _add(f, pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    return f


def _arg(index: int, value: int):
    """Argument index equals value, compared as the kernel reads it (an int: the low 32 bits)."""
    return pyseccomp.Arg(index, pyseccomp.MASKED_EQ, 0xFFFFFFFF, value & 0xFFFFFFFF)


def _add(f, action: int, name: str, *args) -> None:
    try:
        f.add_rule(action, name, *args)
    except (OSError, ValueError, RuntimeError):  # a call this architecture or libseccomp does not know: refused
        pass


def _install_seccomp() -> str:
    if pyseccomp is None:
        return f"no seccomp filter: libseccomp could not be loaded ({SECCOMP_ERROR})"
    try:
        seccomp_filter(os.getpid()).load()
    except OSError as exc:
        return f"no seccomp filter: {exc.strerror or exc}"
    return (f"seccomp filter: an allowlist of {len(ALLOWED_CALLS) + len(RESTRICTED_CALLS) + 1} calls, the rest EPERM; "
            "threads but no processes; signals, limits and scheduling only on itself; no fcntl F_SETOWN/F_SETSIG, "
            "sockets, IPC, inotify, chmod, ptrace, namespaces or mounts")

# -- the grader's side ---------------------------------------------------------------------------

class WeakSandbox(Exception):
    """This machine's sandbox cannot keep a submission from the reference or from other submissions, so
    the grader refuses to grade (one line: why, and the fix)."""


def files_kept(state: dict) -> bool:
    """Whether the worker could not read the reference, the suites or a pack (nor other submissions)."""
    files, identity = state.get("files", ""), state.get("identity", "")
    return (files.startswith("private root") or state.get("landlock", "").startswith("Landlock")
            or (files.startswith("kit directories covered") and identity.startswith("own uid")))


def kept_apart(state: dict) -> bool:
    """Whether the worker could not signal or tamper with the grader and other workers."""
    identity = state.get("identity", "")
    return (identity.startswith("own uid") or identity.endswith("(user namespace)")
            or state.get("scoped", "").startswith("Landlock scoping") or state.get("syscalls", "").startswith("seccomp"))


def refusal(state: dict) -> str:
    """Why the grader must not run someone else's code in a worker that reported this state, with the fix
    (one line; '' if it may)."""
    why = []
    if not files_kept(state):
        why.append("a submission could read the reference solutions, the suites and the pack here "
                   f"({state.get('files', '?')}; {state.get('landlock', '?')}): run the grader where Landlock "
                   "works (Linux 5.13 or later, enabled) or as root with CAP_SYS_ADMIN")
    if not kept_apart(state):
        why.append("a submission could signal the grader and other submissions here "
                   f"({state.get('identity', '?')}; {state.get('syscalls', '?')}; {state.get('scoped', '?')}): "
                   "run the grader as root, or install libseccomp (apt-get install libseccomp2)")
    if not why:
        return ""
    return "; ".join(why) + ". `python -m grader.sandbox` shows what holds (SECURITY.md, 'What holds where')."


def given_up(state: dict) -> list[str]:
    """What this worker's sandbox did not hold, one line each, for the verdict (empty in the full tiers)."""
    out = [f"{key}: {state[key]}" for key in ("files", "landlock") if CUDA_VIEW in state.get(key, "")
           or state.get(key, "").startswith("no Landlock: a CUDA grade")]
    weak = refusal(state)
    return out + ([f"weaker sandbox accepted (--allow-weak-sandbox): {weak}"] if weak else [])


def protect_grader() -> None:
    """Make the grading process non-dumpable when it is not root: a worker with the same uid then
    cannot ptrace it or open /proc/<grader>/fd or /mem (writing to its stdout, say). As root the
    workers run under other uids, which already rules that out."""
    if os.geteuid() != 0:
        _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


# setresuid(2) as a raw system call changes the calling thread's ids only (glibc's wrapper changes every thread's)
SETRESUID = {"x86_64": 117, "aarch64": 147}.get(platform.machine())


def reap(pid: int) -> None:
    """Kill every process still running under the worker's own uid (root only; a worker of its own
    uid cannot hand it to anyone). Catches a descendant that left the worker's process group.
    Call it after the group kill and before waiting for the worker, so its pid cannot be reused."""
    if os.geteuid() != 0:
        return
    if not _kill_as(worker_uid(pid)):
        _scan_and_kill(str(worker_uid(pid)).encode())


def _kill_as(uid: int) -> bool:
    """kill(-1, SIGKILL) from a short-lived thread whose real and effective uid are the worker's: the kernel
    signals every process whose real or saved uid is that uid, in one pass that a fork cannot slip past
    (a fork the signal lands in fails). The grader's other threads keep root; this one ends with the call."""
    if SETRESUID is None:
        return False
    done: list[bool] = []

    def run() -> None:
        libc = _libc()
        if libc.syscall(SETRESUID, uid, uid, 0) != 0:  # the saved uid stays root, to come back
            return
        libc.kill(-1, signal.SIGKILL)  # 0 even when only the worker's zombie is found
        done.append(True)
        libc.syscall(SETRESUID, 0, 0, 0)

    thread = threading.Thread(target=run, name="reap")
    thread.start()
    thread.join()
    return bool(done)


def _scan_and_kill(uid: bytes) -> None:
    """The fallback: /proc scanned for processes of that uid until none is left (ten passes at most)."""
    for _ in range(10):
        found = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/status", "rb") as f:
                    status = f.read()
            except OSError:
                continue
            # a zombie (the killed worker itself, until it is waited for) runs nothing: counting it would scan
            # /proc ten times for every grade
            if _field(status, b"Uid:") == uid and _field(status, b"State:") not in (b"Z", b"X"):
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except OSError:
                    continue
                found += 1
        if not found:
            break


def _field(status: bytes, name: bytes) -> bytes:
    """The first word after name in a /proc/<pid>/status text (b"" if absent)."""
    at = status.find(b"\n" + name)
    words = status[at + len(name) + 1 :].split(None, 1) if at >= 0 else []
    return words[0] if words else b""


