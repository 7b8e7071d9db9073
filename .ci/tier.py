"""Run a command in one of SECURITY.md's weaker tiers (as root):

    python3 .ci/tier.py root-no-sysadmin -- CMD...   root without CAP_SYS_ADMIN (Docker's default, Gradescope's)
    python3 .ci/tier.py nobody -- CMD...             an unprivileged user (uid 65534)
    python3 .ci/tier.py nobody-no-namespaces -- CMD  the same where no namespace can be made (unshare refused)

The command runs in a private mount namespace in which every directory on the way to Python, the venv
and the current directory can be traversed by other users (a Python under a closed /root, say), as on
a machine set up as SECURITY.md asks; nothing else is changed. Exits with the command's status.
"""
import ctypes
import os
import sys
from pathlib import Path

CLONE_NEWNS, MS_BIND, MS_REC, MS_PRIVATE = 0x00020000, 4096, 16384, 1 << 18


def _mount(libc, source, target, fstype, flags, data=None):
    if libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(), flags,
                  data and data.encode()) != 0:
        raise OSError(ctypes.get_errno(), f"mount {target}")


def open_up(libc, needed: list[str]) -> None:
    """Make each closed directory above the needed paths traversable: an empty tmpfs over it, with the
    entries on the way bound back in."""
    closed = sorted({str(a) for p in needed for a in Path(p).parents
                     if a.is_dir() and not os.stat(a).st_mode & 0o001})
    for path in closed:
        keep = f"/tmp/.tier-keep-{abs(hash(path))}"
        os.makedirs(keep, exist_ok=True)
        _mount(libc, path, keep, None, MS_BIND)
        _mount(libc, "tmpfs", path, "tmpfs", 0, "mode=0755")
        for name in sorted(os.listdir(keep)):
            inside = os.path.join(path, name)
            if any(n == inside or n.startswith(inside + "/") for n in needed):
                os.makedirs(inside, exist_ok=True)
                _mount(libc, os.path.join(keep, name), inside, None, MS_BIND | MS_REC)


def main() -> None:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--" or args[0] not in ("root-no-sysadmin", "nobody", "nobody-no-namespaces"):
        print("usage: tier.py root-no-sysadmin|nobody|nobody-no-namespaces -- COMMAND...", file=sys.stderr)
        sys.exit(2)
    mode, _, *command = args
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    python = os.path.realpath(command[0]) if os.path.isabs(command[0]) else sys.executable
    open_up(libc, [os.path.realpath(sys.executable), python, sys.prefix, os.getcwd(), *[p for p in sys.path if p]])
    if mode == "root-no-sysadmin":
        os.execvp("capsh", ["capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$@"', "tier", *command])
    if mode == "nobody-no-namespaces":  # most containers, Ubuntu's AppArmor default: unshare(2) fails
        import errno

        import pyseccomp

        refuse = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        refuse.add_rule(pyseccomp.ERRNO(errno.EPERM), "unshare")
        refuse.load()
    os.execvp("setpriv", ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", *command])


if __name__ == "__main__":
    main()
