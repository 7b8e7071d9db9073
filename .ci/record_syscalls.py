"""Record the system calls a sandbox worker makes once its seccomp filter is loaded, and check them
against the allowlist in grader/sandbox/isolation.py (ALLOWED_CALLS, RESTRICTED_CALLS):

    python .ci/record_syscalls.py                 solutions, skeletons, the dev corpus and a few runtime probes
    python .ci/record_syscalls.py --corpus all    the held-out and real-world corpora too
    python .ci/record_syscalls.py --corpus none   solutions, skeletons and probes only
    python .ci/record_syscalls.py --corpus quick  the solutions (both spawn paths) and the probes: what CI runs

It grades each file under `strace -f` (root, or a kernel that lets a user trace its own children),
the solutions and skeletons on both spawn paths (a fresh interpreter, a fork of the warm zygote),
the rest forked; then keeps, for every worker, the calls made after its
`seccomp(SECCOMP_SET_MODE_FILTER, ...) = 0` (by it and its threads), with the argument the filter
looks at for the argument-restricted calls. It prints each call and how often it was made, the calls
allowed but never seen, and exits 1 if an honest worker made a call the allowlist refuses.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$")
RESULT = re.compile(r"\)\s+=\s+(-?\d+|\?)")

# What honest workers may do beyond the graded files, run with the static policy off: threads (Python's
# and torch's), a traceback, printing, a failed large allocation, sleeping, reading its own file.
PROBES = {
    "threads": """
        import threading, torch
        torch.set_num_threads(2)
        t = threading.Thread(target=lambda: torch.randn(256, 256) @ torch.randn(256, 256))
        t.start(); t.join()
        x = torch.randn(512, 512) @ torch.randn(512, 512)
    """,
    "traceback_print_sleep": """
        import time, traceback, torch
        print("hello", flush=True)
        try:
            torch.ones(2) @ torch.ones(3)
        except RuntimeError:
            traceback.print_exc()
        time.sleep(0.01)
        open(__file__).read()
    """,
    "memory": """
        import torch
        try:
            torch.empty(1 << 40, dtype=torch.uint8)
        except RuntimeError:
            pass
        try:
            bytearray(1 << 33)
        except MemoryError:
            pass
    """,
}


def files(corpus: str) -> list[tuple[int, Path, bool]]:
    """(exercise number, file, both spawn paths) to grade."""
    from grader.catalog import load_catalog

    out = []
    for ex in load_catalog().exercises:
        out += [(ex.number, ex.solution_path, True)]
        if corpus != "quick":
            out += [(ex.number, ex.skeleton_path, True)]
        if corpus not in ("none", "quick"):
            folder = ROOT / "tests" / "corpus" / f"{ex.number:02d}"
            found = folder.rglob("*.py") if corpus == "all" else folder.glob("*.py")
            out += [(ex.number, p, False) for p in sorted(found)]
    return out


def grade_all(corpus: str) -> None:
    """Runs under strace: grade every file (no output but a count)."""
    from grader.catalog import load_catalog
    from grader.runner import grade
    from grader.sandbox import Limits

    catalog = load_catalog()
    limits = Limits(time_s=60)
    graded = 0
    for number, path, both in files(corpus):
        ex = catalog.get(number)
        for warm in ((False, True) if both else (True,)):
            verdict = grade(exercise=ex, path=path, limits=limits, warm=warm)
            if not verdict.passed:  # the extra requests a report makes
                grade(exercise=ex, path=path, limits=limits, warm=True, capture_attention=True)
            graded += 1
    with tempfile.TemporaryDirectory() as tmp:
        policy = Path(tmp) / "runtime.toml"
        policy.write_text("static_check = false\n")
        for name, body in PROBES.items():
            probe = Path(tmp) / f"{name}.py"
            probe.write_text(textwrap.dedent(body) + "\ndef self_attention(x):\n    return x\n")
            for warm in (False, True):
                grade(exercise=catalog.get(1), path=probe, limits=limits, warm=warm, policy_file=policy)
    print(f"graded {graded} files and {len(PROBES)} probes", file=sys.stderr)


def calls_after_filter(trace: Path) -> tuple[collections.Counter, int]:
    """(Counter of call or 'call arg', number of filtered workers) from an `strace -f` log."""
    group: dict[int, int] = {}  # thread -> thread group
    filtered: set[int] = set()  # thread groups whose filter is loaded
    pending: dict[int, str] = {}
    seen: collections.Counter = collections.Counter()
    for line in trace.read_text(errors="replace").splitlines():
        m = LINE.match(line)
        if not m:
            continue
        tid, resumed, name, rest = int(m[1]), m[2], m[3], m[4]
        tgid = group.setdefault(tid, tid)
        if name:  # a call begins
            if tgid in filtered:
                seen[describe(name, rest, tgid)] += 1
            if rest.endswith("<unfinished ...>"):
                pending[tid] = name + "(" + rest[: -len("<unfinished ...>")]
                continue
            text = name + "(" + rest
        else:
            text = pending.pop(tid, resumed + "(") + rest
        call = text.split("(", 1)[0]
        result = RESULT.search(text)
        value = int(result[1]) if result and result[1] != "?" else -1
        if call in ("clone", "clone3", "fork", "vfork") and value > 0:
            group[value] = tgid if "CLONE_THREAD" in text else value
            if tgid in filtered:
                filtered.add(group[value])
        elif call == "seccomp" and "SECCOMP_SET_MODE_FILTER" in text and "{len=" in text and value == 0:
            filtered.add(tgid)
    return seen, len(filtered)


def describe(name: str, args: str, tgid: int) -> str:
    """The call, with the argument values the filter checks for an argument-restricted call."""
    from grader.sandbox.isolation import RESTRICTED_CALLS

    if name not in RESTRICTED_CALLS and name != "clone":
        return name
    parts = [a.strip() for a in args.split(",")]
    if name == "clone":
        return f"clone {'thread' if 'CLONE_THREAD' in args else 'process'}"
    shown = []
    for index in sorted(RESTRICTED_CALLS[name]):
        value = parts[index] if index < len(parts) else "?"
        shown.append("self" if value == str(tgid) else value.split(" ")[0].rstrip(")"))
    return f"{name} {' '.join(shown)}"


def allowed(entry: str) -> bool:
    """Whether the allowlist lets this call (with the recorded argument) through."""
    import fcntl
    import termios

    from grader.sandbox import isolation
    from grader.sandbox.isolation import ALLOWED_CALLS, RESTRICTED_CALLS, SELF

    name, _, shown = entry.partition(" ")
    if name == "clone":
        return shown == "thread"
    if name == "clone3":
        return True  # answered ENOSYS on purpose: libc falls back to clone, whose flags the filter reads
    if name not in RESTRICTED_CALLS:
        return name in ALLOWED_CALLS
    names = {**{k: getattr(fcntl, k) for k in dir(fcntl) if k.startswith("F_")},
             **{k: getattr(termios, k) for k in dir(termios) if k.isupper()},
             **{k: getattr(os, k) for k in dir(os) if k.startswith("PRIO_")},
             **{k: getattr(isolation, k) for k in dir(isolation) if k.startswith("PR_")}}
    for index, value in zip(sorted(RESTRICTED_CALLS[name]), shown.split(" ")):
        number = SELF if value == "self" else names.get(value, int(value, 0) if re.fullmatch(r"-?(0x)?[0-9a-f]+", value) else None)
        if number not in RESTRICTED_CALLS[name][index]:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=("quick", "none", "dev", "all"), default="dev")
    parser.add_argument("--keep", metavar="FILE", help="also write the strace log here")
    parser.add_argument("--grade-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.grade_only:
        return grade_all(args.corpus)
    if not shutil.which("strace"):
        sys.exit("record_syscalls: strace is not installed")
    with tempfile.TemporaryDirectory(prefix="attention-kit-record-") as tmp:
        os.chmod(tmp, 0o755)
        trace = Path(args.keep or Path(tmp) / "trace.txt")
        subprocess.run(["strace", "-f", "-qq", "-s", "0", "-o", str(trace), sys.executable, __file__,
                        "--grade-only", "--corpus", args.corpus], cwd=tmp, check=True)
        seen, workers = calls_after_filter(trace)
    from grader.sandbox.isolation import ALLOWED_CALLS, RESTRICTED_CALLS

    refused = sorted(e for e in seen if not allowed(e))
    names = {e.split(" ")[0] for e in seen}
    print(json.dumps({"workers": workers,
                      "calls": dict(sorted(seen.items())),
                      "allowed_never_seen": sorted((set(ALLOWED_CALLS) | set(RESTRICTED_CALLS)) - names),
                      "refused": refused}, indent=1))
    if not workers:
        sys.exit("record_syscalls: no worker loaded a seccomp filter (is libseccomp installed?)")
    if refused:
        sys.exit(f"record_syscalls: honest workers made calls the allowlist refuses: {', '.join(refused)}")


if __name__ == "__main__":
    main()
