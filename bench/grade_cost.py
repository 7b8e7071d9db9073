"""Where one batch grade's CPU goes, grader side and worker side, measured in CPU seconds (not wall: the machine is shared).

    python bench/grade_cost.py [--grades 20] [--exercises 1-5] [--rounds 1] [--json]
    python bench/grade_cost.py --ab OLD_TREE [--rounds 2]   # OLD_TREE's kit and this one alternating, old/new/new/old

Grades, in one process with a warm fork server (as a `grade batch` pool process does, capture_attention on),
the reference and corpus files of each exercise, and splits each grade's CPU:
- grader: this process's CPU (getrusage, every thread) in each phase of runner.grade (policy, worker start,
  load, the suite, diagnosis, heat maps, localization, close), and inside the suite per check;
- worker: the worker's CPU read from /proc/<pid>/stat (as the budget reads it) around each request, by the phase
  or check that sent it, and its total just before the kill (the rest is its boot: isolation, after the fork).
With --ab, each tree runs this script in its own process (PYTHONPATH at the tree), so grades and workers come
from that tree; the file list is this tree's.

Tenth session, the kit at 7541771 (load 11-16, 30 grades of exercises 1-5 with capture_attention, ms of CPU per
grade): grader 91 (pytest's per-check machinery ~19, localization 11, the check bodies 12, frames 13 (waiting and
checking 8, encoding 2, decoding 2.5), the reference's runs 8.5, the policy 3-10, weights 4, call keys 4), worker 81
(the first request, its boot, 24; test_output_shapes' first batch 22; every run call paid the forbidden-API dispatch
mode), fork server and reaped workers 97 (so ~16 of fork and exit). In-process replays of six grades' frames: 53-65
ms of worker CPU with the dispatch mode, 29-33 without it, 35 with the torch function mode alone. A forked child's
boot (isolate_child and after_boot) 16-18 ms, of which Landlock's restrict 8.5 (7 of it listing directories).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def runtime(pid: int | None) -> float | None:
    """A process's time on a CPU so far, every thread, in nanoseconds' precision (/proc/<pid>/task/*/schedstat;
    /proc/<pid>/stat counts in ticks of 10 ms, too coarse for one request)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except (OSError, TypeError):
        return None
    total = 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


def family_cpu(pid: int) -> float:
    """A process's CPU and its reaped children's (the fork server and the workers it waited for, exit included)."""
    from grader.sandbox.cputime import TICKS, stat_fields

    f = stat_fields(pid)
    return sum(int(x) for x in f[11:15]) / TICKS


def files_for(exercises, grades: int, seed: int) -> list[tuple[int, Path]]:
    """The reference of each exercise, then corpus files drawn as bench/batch.py draws them (no hangs)."""
    rng = random.Random(seed)
    out = []
    while len(out) < grades:
        for ex in exercises:
            pool = [p for p in sorted((CORPUS / f"{ex.number:02d}").glob("*.py")) if "timeout" not in p.name]
            source = ex.solution_path if not out or len(out) % 3 == 0 or not pool else rng.choice(pool)
            out.append((ex.number, source))
    return out[:grades]


class Meter:
    """Wraps the grader's phases and the sandbox's exchanges to attribute CPU to what was running.

    Grader times are exclusive (a phase's own CPU, its wrapped sub-phases' taken out); the worker's CPU during a
    request goes to the innermost phase that owns requests (a top-level phase or a check)."""

    def __init__(self):
        self.grader = collections.Counter()  # phase -> grader CPU, exclusive
        self.worker = collections.Counter()  # phase -> worker CPU during its requests
        self.frames = collections.Counter()  # phase -> frames sent
        self.worker_total = 0.0
        self.stack = [["other", 0.0, True]]  # [name, CPU of wrapped sub-phases, owns requests]

    def enter(self, name: str, owner: bool = True) -> None:
        self.stack.append([name, 0.0, owner, time.thread_time()])

    def leave(self) -> None:
        name, children, _, t0 = self.stack.pop()
        spent = time.thread_time() - t0
        self.grader[name] += spent - children
        self.stack[-1][1] += spent

    def owner(self) -> str:
        return next(entry[0] for entry in reversed(self.stack) if entry[2])

    def wrap(self, obj, attr: str, name: str, owner: bool = True) -> None:
        fn, meter = getattr(obj, attr), self

        def wrapped(*a, **k):
            meter.enter(name, owner)
            try:
                return fn(*a, **k)
            finally:
                meter.leave()
        setattr(obj, attr, wrapped)

    def install(self):
        import _pytest.python
        import grader.diagnosis as diagnosis
        import grader.diagnosis.localize as localize
        import grader.harness as harness
        import grader.probes as probes
        import grader.runner as runner
        from grader import policy
        from grader.sandbox import protocol, session

        meter = self
        runner.policy = type("P", (), {"check": staticmethod(policy.check), "load_policy": staticmethod(policy.load_policy)})
        self.wrap(runner.policy, "check", "policy")
        self.wrap(session.Sandbox, "start", "worker start")
        self.wrap(runner, "_load", "load")
        self.wrap(runner, "run_suite", "suite: pytest session")
        self.wrap(diagnosis, "diagnose", "diagnose")
        self.wrap(probes, "attention_weights", "heat maps")
        self.wrap(localize, "localize_verdict", "localize")
        self.wrap(diagnosis, "mark_consequences", "mark consequences")
        self.wrap(session.Sandbox, "close", "close")
        self.wrap(runner, "place_lines", "place lines")
        self.wrap(_pytest.python.Function, "runtest", "  check bodies", owner=False)
        self.wrap(harness.Harness, "ref_run", "  ref_run", owner=False)
        self.wrap(harness, "call_key", "  call_key", owner=False)
        self.wrap(harness.Harness, "outputs", "  outputs checked", owner=False)
        self.wrap(harness.Harness, "weights", "  weights drawn", owner=False)
        self.wrap(protocol, "encode", "  frames: encode", owner=False)
        self.wrap(protocol, "decode", "  frames: decode", owner=False)

        exchange = session.Sandbox._exchange

        def _exchange(sb, header, tensors, check):
            before = runtime(sb.pid) or 0.0
            meter.enter("  frames: wait, select, check", owner=False)
            try:
                return exchange(sb, header, tensors, check)
            finally:
                meter.leave()
                after = runtime(sb.pid)
                name = meter.owner()
                meter.worker[name] += (after or before) - before
                meter.frames[name] += 1
        session.Sandbox._exchange = _exchange

        kill = session.Sandbox._kill

        def _kill(sb):
            total = runtime(sb.pid)
            if total is not None and getattr(sb, "_metered", None) != sb.pid:
                sb._metered = sb.pid
                meter.worker_total += total
            return kill(sb)
        session.Sandbox._kill = _kill

        collector = runner.Collector
        setup, logreport = collector.pytest_runtest_setup, collector.pytest_runtest_logreport

        def pytest_runtest_setup(self, item):
            meter.leave()  # the check's set-up began in the item's protocol: from the last teardown on
            meter.enter("check " + item.nodeid.split("::", 1)[-1].split("[", 1)[0])
            return setup(self, item)

        def pytest_runtest_logreport(self, report):
            out = logreport(self, report)
            if report.when == "teardown" and meter.stack[-1][0].startswith("check "):
                meter.leave()
                meter.enter("suite: between checks")
            return out
        collector.pytest_runtest_setup = pytest_runtest_setup
        collector.pytest_runtest_logreport = pytest_runtest_logreport
        run_suite = runner.run_suite

        def suite(*a, **k):
            meter.enter("suite: between checks")
            try:
                return run_suite(*a, **k)
            finally:
                meter.leave()
        runner.run_suite = suite


def measure(args) -> dict:
    sys.path.insert(0, os.getcwd())
    from grader.catalog import load_catalog
    from grader.instructor import select_exercises
    from grader.runner import fork_from_now_on, grade
    from grader.sandbox import Limits

    exercises = select_exercises(args.exercises)
    files = files_for(exercises, args.grades, args.seed)
    fork_from_now_on()
    import grader.diagnosis  # noqa: F401
    import grader.harness  # noqa: F401
    catalog = load_catalog()
    for number, path in files[: len(exercises)]:  # warm: kept sessions, reference modules, imports
        grade(exercise=catalog.get(number), path=path, limits=Limits(time_s=20), capture_attention=True)
    meter = Meter()
    meter.install()
    import grader.runner as runner
    zygote = runner.keep_warm().proc.pid
    t0, w0, z0 = cpu(), time.perf_counter(), family_cpu(zygote)
    verdicts = []
    for number, path in files:
        v = runner.grade(exercise=catalog.get(number), path=path, limits=Limits(time_s=20), capture_attention=True)
        verdicts.append(("/".join(path.parts[-2:]), v.passed, [d.id for d in v.diagnoses], v.score))
    n = len(files)
    grader_cpu = (cpu() - t0) / n
    time.sleep(0.5)
    family = (family_cpu(zygote) - z0) / n
    return {"tree": str(Path(runner.__file__).parents[1]), "grades": n, "grader_cpu": grader_cpu,
            "worker_cpu": meter.worker_total / n, "worker_boot": (meter.worker_total - sum(meter.worker.values())) / n,
            "wall": (time.perf_counter() - w0) / n,
            "family": family, "frames": sum(meter.frames.values()) / n,
            "grader": {k: v / n for k, v in meter.grader.items()}, "worker": {k: v / n for k, v in meter.worker.items()},
            "frames_by": {k: v / n for k, v in meter.frames.items()}, "verdicts": verdicts,
            "load": os.getloadavg()[0]}


def show(r: dict) -> None:
    print(f"{r['tree']}: {r['grades']} grades, load {r['load']:.1f}")
    print(f"  per grade: grader CPU {r['grader_cpu']:.3f} s, worker CPU {r['worker_cpu']:.3f} s "
          f"(boot {r['worker_boot']:.3f}); fork server and reaped workers {r['family']:.3f} s; {r['frames']:.1f} frames, wall {r['wall']:.2f} s")
    rows = sorted(set(r["grader"]) | set(r["worker"]), key=lambda k: -(r["grader"].get(k, 0) + r["worker"].get(k, 0)))
    for k in rows:
        g, w = r["grader"].get(k, 0.0), r["worker"].get(k, 0.0)
        if g + w >= 0.0005:
            print(f"  {k:52s} grader {g * 1000:6.1f} ms  worker {w * 1000:6.1f} ms  frames {r['frames_by'].get(k, 0):4.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=20)
    parser.add_argument("--exercises", default="1-5")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the measurement as JSON")
    parser.add_argument("--ab", type=Path, help="an older tree: run it and this one alternating, old/new/new/old")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    if args.ab is None:
        r = measure(args)
        print(json.dumps(r)) if args.json else show(r)
        return
    results = {"old": [], "new": []}
    order = ["old", "new", "new", "old"] * args.rounds
    for which in order:
        tree = args.ab if which == "old" else ROOT
        env = {**os.environ, "PYTHONPATH": str(tree)}
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--json", "--grades", str(args.grades),
                               "--exercises", args.exercises, "--seed", str(args.seed)], cwd=tree, env=env,
                              capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(proc.stderr[-2000:])
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results[which].append(r)
        print(f"{which}: grader {r['grader_cpu']:.3f} s, worker {r['worker_cpu']:.3f} s, fork server and reaped workers "
              f"{r['family']:.3f} s, frames {r['frames']:.1f}, "
              f"wall {r['wall']:.2f} s, load {r['load']:.1f}", flush=True)
    for which in ("old", "new"):
        rs = results[which]
        g = sum(r["grader_cpu"] for r in rs) / len(rs)
        w = sum(r["family"] for r in rs) / len(rs)
        print(f"{which} mean: grader {g:.3f} + fork server and workers {w:.3f} = {g + w:.3f} s CPU per grade")
    same = all(a["verdicts"] == b["verdicts"] for a in results["old"] for b in results["new"])
    print(f"verdicts (passed, diagnoses, score) identical: {same}")
    old = sum(r["grader_cpu"] + r["family"] for r in results["old"])
    new = sum(r["grader_cpu"] + r["family"] for r in results["new"])
    print(f"CPU per grade new/old: {new / old:.2f}")


if __name__ == "__main__":
    main()
