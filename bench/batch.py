"""Batch grading speed: marginal seconds per submission for `grade batch --jobs 2`, against one-by-one CLI runs.

Usage: python bench/batch.py [--submissions 30] [--jobs 2] [--sample 10] [--exercises 1-5]

Builds synthetic submissions (every third one the reference solutions, the others files drawn
from tests/corpus/, hanging files left out: a hang costs its full time budget and says nothing
about speed), grades a small batch and the whole batch with fresh caches, and reports
(T_all - T_small) / (N - n): the cost of one more submission once the pool is warm (target <= 0.3 s, issue 23).
One-by-one grading (`grade exercise N FILE --json`, a cold process per file) is timed on a random
sample of the files and extrapolated to whole submissions.

Where a batch grade's time went (issue 23, item 4; 2 shared cores, load average 6-12, so only ratios and
shares mean anything). Profiled in one process (cProfile, and phase timers without it) on 5-exercise
submissions with a warm fork server:
- every grade ran a new pytest session (configure, register ~27 plugins, collect): about a third of the
  grader's own CPU; now grader/suite_session.py collects each exercise's suite once per process and runs
  the same items again (verdicts identical, tests/test_suite_session.py). Alternating the two in one
  process, 20 files of exercises 1-5: grader CPU 0.18 vs 0.26 s per file, wall 1.00-1.09 vs 1.14-1.40 s.
- isolation.reap() counted the killed worker itself (a zombie until waited for) and so scanned /proc ten
  times per grade: 0.79 s per grade at load 10, now one scan, 0.08 s.
- a pool process imported torch three times (itself, a fresh worker for its first grade, then the fork
  server for the second); its fork server now boots from the pool initializer, beside the pool's imports,
  and serves the first grade too.
- left, per file at load ~10: 34 round trips to the worker 0.58 s (0.13 s of worker CPU), fork and boot
  report 0.13 s, kill and /proc scan 0.07 s, localization 0.08 s. Not changed: the batch's main process
  imports torch before the pool starts (cli.py's load_catalog().check_forbidden()), a serial fixed cost.
One run each, `--sample 3`: before 8.89 s marginal per submission, one-by-one / marginal 15.2x (load
9.6-11.9); after 1.13 s, 33.8x (load 5.5-6.8), and in a later run 1.99 s, 15.3x (load 1.9-4.2): the marginal
cost moves with the neighbours' load more than with the change. The same 10 submissions graded alternately
by the kit before and after (`grade batch --jobs 2`, PYTHONPATH at an archive of the old commit, load 3.5-3.8):
36.8 and 38.8 s before, 30.8 and 32.6 s after (-16%, fixed costs included), gradebooks identical but for
produced_by's kit digest.
Sixth session, once every branch was merged, on a quiet machine (load 1-2.5), `--sample 1`, the commit before
the session (654c854, PYTHONPATH at a worktree of it) then main, back to back: 6 submissions 21.7 -> 14.7 s,
30 submissions 49.1 -> 39.1 s, marginal 1.14 -> 1.02 s per submission (each tree draws from its own corpus).
Seventh session (issue 23, item 4: batching requests). Profiled in one process, 20 grades (exercises 1-5, the
reference and three corpus files each, warm fork server; cProfile on CPU time, and counters around each frame
sent and received), the commit before (48b9ff7) and after alternating, two rounds each, load 4.6-5.1:
- before, per grade: 33.4 frames, 0.52-0.54 s waiting for replies, of which 0.14 s was worker CPU; grader CPU
  0.20 s; wall 0.93-0.95 s. Where it went: safetensors.torch.save, 1.8 ms per frame on each side (its checks
  for shared storage, six times the writing); the module checks sent every input shape, changed token and seed
  as a frame of its own (test_output_shapes and test_matches_reference_float64: 4 per constructor case; the
  future-token check T); weights() and every ref_run built the reference module (10 ms at that load); pytest
  formatted the traceback of each failed check that --tb=no never shows (a tenth of a failing grade's suite
  time); kit and ex were rebuilt for each check (each one a `request` fixture def, ~6 per check); the policy
  walked the tree twelve times.
- after: a check's calls that do not depend on each other's outputs go in one frame (Harness.call/runs ->
  Sandbox.batch -> the worker's batch op: each call gets its own copy of the tensors, the first that raises
  ends the batch, each reply is checked as a single reply is, then the batch as a whole); frames are written in
  the safetensors format directly (still read by safetensors' parser on both sides); the reference's parameter
  shapes and built modules are kept per process (copied for each use); failed checks get a one-line report;
  kit and ex are built once per grade; the policy walks the tree once. Per grade: 19.5 frames, 0.30-0.37 s
  waiting, worker CPU 0.10-0.11 s, grader CPU 0.10-0.13 s, wall 0.55-0.67 s (0.59-0.70x before).
- this script, `--sample 1`, after then before, back to back (load 2.3-5.0): marginal 1.65 vs 2.60 s per
  submission (0.63x); 6 submissions 29.5 vs 27.6 s, 30 submissions 69.0 vs 90.0 s.
- verdicts: two random samples of 40 corpus files (tests/corpus/0*, 1*), graded by both trees: the same JSON,
  but for which parameter a wrong-shaped module's error names first. That came from the order of the frame's
  tensors, which safetensors' decoder gives in a hash order drawn per process (before and after alike); the
  worker now checks them in the module's own order.
- the 0.3 s target is not met on this machine. Left per grade (after, load ~5): grader CPU 0.10-0.13 s (pytest's
  per-check machinery about a quarter, then the reference's own forward and the comparisons, the policy), worker
  CPU ~0.10 s (17 run calls, each building and casting the submission's module and running it under the
  forbidden-API watch, 2-3 ms a call), fork and boot ~0.05 s, kill and /proc scan ~0.04 s. With 2 jobs on 2
  cores, five grades of ~0.28 s of CPU are ~0.7 s per submission on an idle machine: 0.3 s needs the CPU per
  grade itself cut by another ~2.3x (fewer calls per check: the shape and float64 checks could share inputs; a
  run that does not rebuild the module per call), not fewer round trips.
Eighth session (issue 23, item 4). Profiled first, in one process (20 grades of exercises 1-5: the reference and
three corpus files each, warm fork server; load 7-10, so shares, not seconds). Grader CPU 0.18 s per grade: pytest's
per-check machinery (fixture set-up, reports, hooks) about a quarter; deep copies of the kept reference module, one
per ref_run, 14% (more than the reference's own forward); the localization's alignment and rules 10% (its trace
reply is small); the policy's tree walks 6%; the /proc scan at each worker's kill 4%. Worker CPU 0.12-0.14 s per
grade, replayed in one process from the frames of those grades: test_output_shapes and
test_matches_reference_float64 47% (22 run calls per grade: each builds the submission's module, 2.3 ms, casts it,
1.5 ms, loads the weights and runs it under the forbidden-API watch), then the grader's calls outside pytest
(load, describe, heat maps, trace) 13%, test_future_tokens_do_not_leak 10%.
- The two checks sent the same calls but for the inputs' seeds: test_output_shapes now draws
  test_matches_reference_float64's inputs, and a grade remembers the answers to its run calls (Results, keyed by the
  request and the tensors' bytes; a copy each time; errors are not remembered), so those calls run once.
- ref_run resets the process's kept reference module (its state and gradients) instead of deep-copying it; a
  second thread that finds it in use takes a copy, as before.
- the kit before (a8ff028, PYTHONPATH at an archive of it: the grader, its fork server and workers all run from the
  tree given) and after, alternating old/new/new/old in one run, the same 20 grades, load 8.8-11.5: grader CPU
  0.173, 0.175 -> 0.146, 0.157 s per grade; worker CPU 0.139, 0.142 -> 0.095, 0.103 s; calls 33.9 -> 25.4; wall
  1.16, 1.02 -> 0.96, 0.93 s (CPU per grade 0.79x, wall 0.87x). Verdicts: `bench/diagnosis_corpus.py dev --every`
  identical before and after (213/213, 37/37).
- `grade batch --jobs 2`, the same 8 submissions, old small / new small / new all / old all (2 and 8 submissions),
  load 7.6-8.7: marginal 2.59 -> 1.38 s per submission (0.53x; 6 submissions apart, so noisy), the 8 submissions
  64.6 -> 58.3 s (0.90x, start-up included); gradebooks identical but for produced_by's kit digest.
- left: pytest's per-check machinery; the worker's module build and cast per call (a kept module would carry a
  submission's own state from call to call); the localization (another engineer's). At ~0.25 s of CPU per grade,
  2 jobs on 2 idle cores are still ~0.6 s per 5-exercise submission: 0.3 s is not reachable on this machine
  without halving that again.
Ninth session (issue 23, item 4). Profiled first: Sandbox.close() took 26-38 ms of grader CPU per grade here (load
5-7, ~90 processes), nearly all the /proc scan of reap(); the rest of close() is waiting for the killed worker to
exit (70-120 ms wall, the kernel's teardown). reap() now sends kill(-1, SIGKILL) from a short-lived thread whose ids
are the worker's (the raw setresuid call changes that thread only): one kernel pass over every process of that uid,
which a fork cannot slip past; the scan stays as the fallback. close() CPU 2.5-2.7 ms (old/new/old/new, 15 closes
each). This script's A/B (old 0dbdad5 by PYTHONPATH, then new; 8 and 2 submissions, old small, new small, new all,
old all, load 4.9-5.4): marginal 1.55 -> 0.95 s per submission (0.61x), 8 submissions 31.4 -> 27.8 s (0.89x),
gradebooks identical but for produced_by. A second round in the reverse order (new small, old small, old all, new
all, load 5.4-5.6): 1.64 -> 1.88 s (1.15x). The two rounds together 1.60 -> 1.42 s (0.89x): the neighbours' load moves
the marginal cost more than the ~30 ms of CPU saved per grade; the 0.3 s target is still not met here.
Tenth session (issue 23, item 4). This script now also counts the batch's CPU (every process under it, through a
subreaper), and --against OLD_TREE grades the same batches with both kits. Profiled first with bench/grade_cost.py
(CPU, not wall; load 11-16): per grade ~0.19 s of CPU, grader ~0.09 s (pytest's per-check hooks ~21%, frames 14%,
the check bodies 13%, localization 12%, the reference's runs 9%, policy, weights and call keys ~4% each) and fork
server plus worker ~0.10 s (the worker's Python dispatch mode watching op names for forbidden kernels more than a
third of it, its boot ~16 ms of which Landlock's allowlist 8, fork and exit ~12-16 ms). Cut: the dispatch mode (the ops are refused by their kernels instead,
SECURITY.md), the allowlist worked out once in the fork server, the reference's answers and the drawn weights kept
per process, pytest's printing and fixture plugins off in the kept session, broadcast_shapes without sympy (a
second of each pool process's CPU). grade_cost.py --ab, old/new/new/old, 20 grades each: 0.187 -> 0.149 s CPU per
grade (0.79x; grader 0.85x, fork server and workers 0.75x), verdicts identical. This script --against 7541771,
14 submissions (4 small), load 8.7-10.1: marginal 1.36 -> 0.85 s wall, 0.84 -> 0.46 s CPU per submission (0.55x;
0.23 s per submission on 2 idle cores), gradebooks equal but for produced_by. An earlier round at load 15-19 (12
and 4 submissions) gave 0.45 -> 0.64 s CPU: 8 submissions apart at that load, the marginal is noise; the fixed cost
fell 3 s (17.3 -> 14.2 s CPU for 4 submissions: sympy). Two later rounds at load 4.5-5.3: 16 submissions (4 small)
0.86 -> 0.98 s CPU per submission; 30 (6 small) marginal 0.90 -> 0.93 s wall, 0.68 -> 0.63 s CPU (0.31 s per
submission on 2 idle cores), the whole batch 33.6 -> 27.7 s CPU (0.82x), its fixed part 17.4 -> 12.7 s. CPU time too
moves with the neighbours (grade_cost.py --ab gave 0.79x at load 11-17 and 0.91x at load 3.7, and one tree's two
runs differed by 20%): the marginal cost is not met, as wall or as CPU per 2 cores.
Eleventh session (issue 23, item 4). Profiled first (grade_cost.py, 30 grades, load 1.0): 126 ms of CPU per grade,
grader 64 (localization 16, check bodies 9, frames 9, policy 3, diagnosis 3, pytest's per-check hooks ~1 a check),
worker 50 (its first request 15, test_output_shapes' first batch 12; replayed in a plain fork 33: the rest is the
isolated process's page faults and kernel time, ~2500 minor faults per worker), fork and exit ~12. Under cProfile the
localization's source helpers re-walked the whole tree for every question (ast.walk a fifth of a grade's grader
CPU) and pytest built ~6 `request` fixture definitions per check. Cut: a shared tree is walked once (source.walk),
the suites' fixtures take pytestconfig and the blocked/unimported skip is a setup hook, a remembered reply is copied
without deepcopy, call keys hash without a bytes copy. Localization under cProfile 1.09 -> 0.42 s for 15 grades.
--against 5bbe8cd, 16 submissions (4 small), load 10.8-12.0: marginal 0.85 -> 0.77 s CPU per submission (0.90x),
gradebooks equal but for produced_by; grade_cost.py --ab at load 11: 0.154 -> 0.152 s (0.99x, inside the noise).
Left: the 0.3 s target needs the worker's cost per grade (fork, faults, ~23 module builds) and the ~17 round trips
cut, which a plan-then-run grading model (the checks declare their calls, the worker answers them in one frame)
would do, at the price of running calls in another order than the checks do (a hang or a forbidden call would
then fail checks that passed before it): not done here.
Twelfth session (issue 23, item 4). Profiled first on a quiet machine (load 2.5, grade_cost.py, 30 grades): 147 ms
of CPU per grade, grader 68 (localization 18, pytest's per-check machinery ~10, check bodies 10, frames 9, policy
4, diagnosis 4), worker 69 (user 71, sys 14 per isolated worker: its boot after the fork 12-23 ms, of which the
private root's binds ~9, Landlock ~3, seccomp 0-6), fork and exit ~10. The worker's requests replayed in a plain
fork: 55-60 ms per grade, a third of it the forbidden-API watch's torch-function mode (~2850 torch calls per grade
pass through it; its own body ~4 ms of that), Linear's random init ~10 (every run builds the module again), the
Unchanged check ~3. One ex-4 module run under the watch made 130 torch calls: building 21, casting to float64 39,
the no-op .to(cpu) 40, the forward 23. This script, quiet machine: marginal 0.48 s wall, 0.85 s CPU per
submission. Plan-then-run would save the frames' ~9 ms grader and ~5 ms worker per grade (17-23 frames), under
10% of the CPU, which is what 2 jobs on 2 cores are bound by; not built.
Cut: Unchanged compares by identity in C first; run() leaves out a .to(cpu) that would change nothing (stays()).
Replayed, min of 4 rounds: worker 66.5 -> 60.8 ms per grade, replies byte-identical. --against 2745625 (30
submissions, 6 small; load 4.2-10.5): marginal CPU 1.33 -> 1.13 s per submission (0.85x), gradebooks equal.
peer_otter.py --files 16 after (load 6-13): 2.55x per file, 5.23x on the cohort, no pass/fail disagreement; at that
load the cohort (16 files, 2 slots) is mostly the batch's start-up: 4 torch imports (2 pool processes, 2 fork
servers, ~2.3 s of CPU each) against ~0.2 s of CPU per grade. cold_grade.py --runs 5, old then new (load 2.7-3.8):
1.31x and 1.39x (noise: neither change touches a cold grade's path).
Left: at ~130 ms of CPU per grade, 2 cores give ~0.33 s per submission at best. The rest is mostly per-call work
(a module built, cast and loaded under the watch for each of ~27 run calls; reusing one module across calls would
carry a submission's own state) and per-worker isolation (binds, Landlock, seccomp: sandbox code).
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.instructor import select_exercises

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
GRADE = Path(sys.executable).with_name("grade")
COMMAND = [str(GRADE)] if GRADE.is_file() else [sys.executable, "-m", "grader"]


def build(folder: Path, count: int, exercises, rng: random.Random) -> list[list[tuple[int, Path]]]:
    """count submission folders in folder; returns, per submission, (exercise number, file) pairs."""
    made = []
    for i in range(count):
        sub = folder / f"student{i:02d}"
        sub.mkdir(parents=True)
        files = []
        for ex in exercises:
            pool = [p for p in sorted((CORPUS / f"{ex.number:02d}").glob("*.py")) if "timeout" not in p.name]
            source = ex.solution_path if i % 3 == 0 or not pool else rng.choice(pool)
            shutil.copyfile(source, sub / ex.file)
            files.append((ex.number, sub / ex.file))
        made.append(files)
    return made


PR_SET_CHILD_SUBREAPER = 36


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def reap_orphans() -> None:
    """Wait for every descendant left (a pool process's fork server outlives it for a moment): with this process a
    subreaper they are its children, and their CPU is counted in RUSAGE_CHILDREN once waited for."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def timed_batch(subs: Path, out: Path, jobs: int, spec: str, tree: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the batch and every process under it: pool, fork servers, workers).
    tree: grade with the kit in that directory (PYTHONPATH) instead of the installed one."""
    reap_orphans()
    env = {**os.environ, "PYTHONPATH": str(tree)} if tree else None
    cpu0, start = children_cpu(), time.perf_counter()
    proc = subprocess.run([*COMMAND, "batch", str(subs), "--jobs", str(jobs), "-o", str(out), "--exercises", spec,
                           "-q"], capture_output=True, text=True, env=env, cwd=tree)
    elapsed = time.perf_counter() - start
    reap_orphans()
    if proc.returncode != 0:
        raise SystemExit(f"grade batch exited {proc.returncode}: {proc.stderr[-800:]}")
    return elapsed, children_cpu() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=30)
    parser.add_argument("--small", type=int, default=6, help="size of the small batch that measures fixed costs")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=10, help="one-by-one CLI runs to time (then extrapolated)")
    parser.add_argument("--exercises", default="1-5")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", type=Path, help="an older tree: grade the same batches with it and this one, "
                        "old small, new small, new all, old all, and compare (no one-by-one runs)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    exercises = select_exercises(args.exercises)
    if args.against:
        return against(args, exercises, rng)
    with tempfile.TemporaryDirectory(prefix="attention-kit-bench-") as tmp:
        tmp = Path(tmp)
        made = build(tmp / "all", args.submissions, exercises, rng)
        (tmp / "small").mkdir()
        for i in range(args.small):
            shutil.copytree(tmp / "all" / f"student{i:02d}", tmp / "small" / f"student{i:02d}")
        t_small, c_small = timed_batch(tmp / "small", tmp / "small.csv", args.jobs, args.exercises)
        t_all, c_all = timed_batch(tmp / "all", tmp / "all.csv", args.jobs, args.exercises)
        marginal = (t_all - t_small) / (args.submissions - args.small)
        marginal_cpu = (c_all - c_small) / (args.submissions - args.small)

        files = [f for sub in made for f in sub]
        sample = rng.sample(files, min(args.sample, len(files)))
        one_by_one = []
        for number, path in sample:
            start = time.perf_counter()
            subprocess.run([*COMMAND, "exercise", str(number), str(path), "--json"], capture_output=True)
            one_by_one.append(time.perf_counter() - start)
    per_file = statistics.mean(one_by_one)
    per_submission = per_file * len(exercises)
    print(f"{args.submissions} submissions x {len(exercises)} exercises, --jobs {args.jobs}")
    print(f"grade batch, {args.small:>2} submissions: {t_small:6.1f} s")
    print(f"grade batch, {args.submissions:>2} submissions: {t_all:6.1f} s  ({t_all / args.submissions:.2f} s per submission "
          f"including start-up)")
    print(f"marginal cost: {marginal:.2f} s per submission (target <= 0.3)")
    print(f"marginal CPU: {marginal_cpu:.2f} s per submission, every process of the batch (CPU {c_small:.1f} s and "
          f"{c_all:.1f} s); on {args.jobs} idle cores at least {marginal_cpu / args.jobs:.2f} s of wall each")
    print(f"one by one (`grade exercise N FILE`): {per_file:.2f} s per file, mean of {len(sample)} sampled runs "
          f"(median {statistics.median(one_by_one):.2f}); extrapolated to {per_submission:.2f} s per submission, "
          f"{per_submission * args.submissions:.0f} s for the batch")
    print(f"ratio one-by-one / batch marginal: {per_submission / marginal:.1f}x; "
          f"one-by-one / batch total: {per_submission * args.submissions / t_all:.1f}x")


def gradebook_rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8-sig", newline="") as f:
        return [{k: v for k, v in row.items() if k != "produced_by"} for row in csv.DictReader(f)]


def against(args, exercises, rng) -> None:
    with tempfile.TemporaryDirectory(prefix="attention-kit-bench-") as tmp:
        tmp = Path(tmp)
        build(tmp / "all", args.submissions, exercises, rng)
        (tmp / "small").mkdir()
        for i in range(args.small):
            shutil.copytree(tmp / "all" / f"student{i:02d}", tmp / "small" / f"student{i:02d}")
        trees = {"old": args.against.resolve(), "new": ROOT}
        got = {}
        for which, size in [("old", "small"), ("new", "small"), ("new", "all"), ("old", "all")]:
            out = tmp / f"{which}-{size}.csv"
            got[which, size] = timed_batch(tmp / size, out, args.jobs, args.exercises, trees[which])
            print(f"{which} {size}: {got[which, size][0]:.1f} s wall, {got[which, size][1]:.1f} s CPU, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
        n = args.submissions - args.small
        for which in ("old", "new"):
            wall = (got[which, "all"][0] - got[which, "small"][0]) / n
            cpu = (got[which, "all"][1] - got[which, "small"][1]) / n
            print(f"{which}: marginal {wall:.2f} s wall, {cpu:.2f} s CPU per submission "
                  f"(on {args.jobs} idle cores at least {cpu / args.jobs:.2f} s)")
        old_cpu = got["old", "all"][1] - got["old", "small"][1]
        new_cpu = got["new", "all"][1] - got["new", "small"][1]
        print(f"marginal CPU new/old: {new_cpu / old_cpu:.2f}")
        for size in ("small", "all"):
            books = [gradebook_rows(tmp / f"{which}-{size}.csv") for which in ("old", "new")]
            print(f"gradebooks ({size}) equal but for produced_by (the kit's digest): {books[0] == books[1]}")


if __name__ == "__main__":
    main()
