"""Peer benchmark: the kit against Otter-Grader 7 on the same exercise-3 files, measured in one run.

Usage: python bench/peer_otter.py [--venv DIR] [--files 16] [--jobs 2] [--keep DIR]

Run it with the kit's own Python (the one whose `grade` it times). It:

1. Creates, or reuses, a separate virtual environment for Otter (`--venv`, default
   ~/.cache/attention-kit-bench/otter7-venv) holding otter-grader==7.0.0, torch==2.13.0 and ipykernel
   (Otter executes a .py submission as one notebook cell in a Jupyter kernel; 7.0.0 does not pull
   ipykernel in itself). A venv that already has otter-grader 7.0.0 is used as it is.
2. Builds an Otter assignment for exercise 3 (causal attention) with `otter generate`: six OK-format
   tests (shape; the mask moves with .to(device); causal masking; numerics against
   solutions/03_causal_attention.py with its weights loaded by name and F.scaled_dot_product_attention
   refused; eval mode ignores dropout; dropout acts on the attention weights in training), whose check
   functions live in a support package shipped in the autograder zip (Otter copies it next to the
   submission). `otter run` executes the submission as one notebook cell, then the tests.
3. Takes N files (default 16): the reference solution and N-1 files spread evenly over the sorted
   tests/corpus/03/*.py, leaving out files that hang (a hang costs a full time budget and says nothing
   about speed).
4. Times, in the same run:
   (a) per file, a cold process each as a student would run it: `otter run -a autograder.zip FILE`
       against `grade exercise 3 FILE --json`, alternating which goes first;
   (b) the cohort: `grade batch DIR --jobs J --exercises 3` (one folder per file) against Otter's
       cohort grading without Docker. `otter grade` in Otter 7 is Docker-only (it builds a grading image
       from ubuntu:22.04 and installs the environment over the network; it has no local mode), so
       Otter's cohort here is `otter run` on every file, J processes at a time: the same cores, the same
       parallelism.
5. Prints both tools' scores per file, the files on which they disagree about pass/fail, the load
   average (`uptime`) around each measurement, and the ratios (Otter time / kit time): per file as the
   ratio of the summed times and as the median of the per-file ratios, and for the cohort. Targets
   (issue 23): >= 4x per file, >= 10x on the cohort.

Only ratios from one run mean anything on a shared machine: absolute times move with the load.
Issue 23, item 4 (a kept pytest session per exercise, one /proc scan per worker kill, pool processes forking
from a fork server started in their initializer): 3.00x per file (median 3.11x), 7.93x on the cohort (kit
19.1 s, Otter 151.2 s; load 2.4-4.0), from 2.66x and 5.47x before. What is left on the cohort is fixed
cost: the batch's main process imports torch before its pool starts (cli.py: load_catalog().check_forbidden()),
then each pool process and its fork server import it again.
Seventh session (batched requests, bench/batch.py): this script with the kit before (48b9ff7, PYTHONPATH at a copy of
it) and after, one run each, the same Otter venv: before 2.67x per file (median 2.65x), 8.18x on the cohort (kit
17.39 s, Otter 142.3 s; load 2.5-3.7); after 2.42x (median 2.68x), 8.35x (kit 17.4 s, Otter 145.6 s; load 3.6-5.3).
Neither moved: a cold file is two torch imports (grader and worker) and a cohort of 16 files at 2 slots is mostly
the batch's fixed start-up; batching shortens the grades after the first, of which this cohort has few.
Eighth session (repeated run calls answered once per grade, the reference module reset instead of copied): the kit
before (a8ff028) and after, `--files 6`, both runs side by side, stopped after two files each at load 10-15 (a file
pair took 100 s; the cohort was never reached): per file before 2.01x and 1.97x, after 2.05x and 2.05x. A cold file
is unchanged by this work (two torch imports, then a suite that is now ~20% cheaper).
Exit status: 0 when it ran (whatever the ratios); non-zero when a tool could not be set up or graded nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "03_causal_attention.py"
CORPUS = ROOT / "tests" / "corpus" / "03"
FILE_NAME = "03_causal_attention.py"
GRADE = Path(sys.executable).with_name("grade")
GRADE_CMD = [str(GRADE)] if GRADE.is_file() else [sys.executable, "-m", "grader"]
OTTER_VERSION = "7.0.0"
OTTER_REQUIREMENTS = [f"otter-grader=={OTTER_VERSION}", "torch==2.13.0", "ipykernel"]
DEFAULT_VENV = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "attention-kit-bench" / "otter7-venv"

# -- the Otter assignment ----------------------------------------------------------------------
# The checks, in the support package the autograder zip carries (Otter copies it next to the
# submission). They mirror the kit's hidden suite in spirit, in float64, with the reference's weights
# loaded into the submission by parameter name (the names are part of the contract).
CHECKS = '''
"""Exercise 3 checks for the Otter peer benchmark (bench/peer_otter.py). Each returns True or raises."""
import importlib.util
import os

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))


def reference():
    spec = importlib.util.spec_from_file_location("otter_ref_solution", os.path.join(_HERE, "solution.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CausalAttention


def pair(Student, d_in=8, d_out=6, ctx=10, dropout=0.0, bias=False, seed=0):
    """The reference and the submission built alike, the reference's weights loaded into the submission."""
    torch.manual_seed(seed)
    ref = reference()(d_in, d_out, ctx, dropout, qkv_bias=bias).double()
    stu = Student(d_in, d_out, ctx, dropout, qkv_bias=bias).double()
    params = dict(stu.named_parameters())
    for name, value in ref.named_parameters():
        assert name in params, f"no parameter {name}"
        assert params[name].shape == value.shape, f"{name}: shape {tuple(params[name].shape)}"
        with torch.no_grad():
            params[name].copy_(value)
    return ref, stu


def check_shape(Student):
    for d_in, d_out, T, ctx in ((8, 6, 7, 10), (4, 4, 10, 10), (5, 3, 1, 4)):
        m = Student(d_in, d_out, ctx, 0.0).eval()
        y = m(torch.randn(2, T, d_in))
        assert tuple(y.shape) == (2, T, d_out), f"shape {tuple(y.shape)}"
    return True


def check_mask_device(Student):
    """The mask moves with the module (a buffer, or built in forward on x's device; the kit accepts both) and is
    not a parameter: the module runs on the meta device, and its parameters are the three projections."""
    m = Student(8, 6, 10, 0.0)
    names = sorted(n for n, _ in m.named_parameters())
    assert names == ["W_key.weight", "W_query.weight", "W_value.weight"], f"parameters {names}"
    y = m.to("meta").eval()(torch.randn(2, 7, 8, device="meta"))
    assert y.device.type == "meta" and tuple(y.shape) == (2, 7, 6), "the module does not move with .to(device)"
    return True


def check_causal(Student):
    torch.manual_seed(1)
    m = Student(8, 6, 10, 0.0).double().eval()
    x = torch.randn(2, 9, 8, dtype=torch.float64)
    y = m(x)
    for t in (0, 3, 7):
        x2 = x.clone()
        x2[:, t + 1:] = torch.randn_like(x2[:, t + 1:])
        y2 = m(x2)
        assert torch.allclose(y[:, : t + 1], y2[:, : t + 1], rtol=1e-9, atol=1e-12), f"token {t} sees the future"
    return True


def _refused(*args, **kwargs):
    raise RuntimeError("F.scaled_dot_product_attention is not allowed in exercise 3: write the attention by hand")


def check_numerics(Student):
    """Against the reference in float64, with F.scaled_dot_product_attention refused (the kit bans it too)."""
    import torch.nn.functional as F

    for bias, T in ((False, 7), (True, 10), (False, 1)):
        ref, stu = pair(Student, bias=bias)
        x = torch.randn(3, T, 8, dtype=torch.float64)
        saved, F.scaled_dot_product_attention = F.scaled_dot_product_attention, _refused
        try:
            got = stu.eval()(x)
        finally:
            F.scaled_dot_product_attention = saved
        want = ref.eval()(x)
        assert torch.allclose(got, want, rtol=1e-7, atol=1e-9), f"max |diff| {(got - want).abs().max().item():.3g}"
    return True


def check_dropout_eval(Student):
    ref, stu = pair(Student, dropout=0.5)
    x = torch.randn(2, 8, 8, dtype=torch.float64)
    a, b, want = stu.eval()(x), stu(x), ref.eval()(x)
    assert torch.equal(a, b), "eval mode is not deterministic"
    assert torch.allclose(a, want, rtol=1e-7, atol=1e-9), "eval mode output differs from the reference"
    return True


def check_dropout_train(Student):
    """Dropout on the weights: with T = d_in = d_out the values are invertible, so the dropped weights can be
    read back from the output; each must be 0 or the eval weight / (1 - p), and some must be dropped."""
    T, p = 6, 0.5
    ref, stu = pair(Student, d_in=T, d_out=T, ctx=T, dropout=p, seed=2)
    x = torch.randn(1, T, T, dtype=torch.float64)
    with torch.no_grad():
        q, k, v = ref.W_query(x), ref.W_key(x), ref.W_value(x)
        s = (q @ k.transpose(-2, -1) / T ** 0.5).masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
        w = torch.softmax(s, dim=-1)[0]
        stu.train()
        dropped = 0
        for _ in range(3):
            out = stu(x)[0]
            d = out @ torch.linalg.inv(v[0])
            kept = torch.isclose(d, w / (1 - p), rtol=1e-6, atol=1e-9)
            zero = torch.isclose(d, torch.zeros_like(d), atol=1e-9)
            assert bool((kept | zero).all()), "training output is not (weights with dropout) @ values"
            dropped += int((zero & (w > 0)).sum())
        assert dropped > 0, "nothing was dropped in training mode"
    return True
'''

TESTS = {  # test name -> check function
    "q1_shape": "check_shape",
    "q2_mask_device": "check_mask_device",
    "q3_causal": "check_causal",
    "q4_numerics": "check_numerics",
    "q5_dropout_eval": "check_dropout_eval",
    "q6_dropout_train": "check_dropout_train",
}


def ok_test(name: str, check: str) -> str:
    """One OK-format test file: a doctest that calls the check on the submission's CausalAttention."""
    return "OK_FORMAT = True\n\ntest = " + repr({
        "name": name, "points": 1,
        "suites": [{"type": "doctest", "scored": True, "setup": "", "teardown": "",
                    "cases": [{"hidden": False, "locked": False,
                               "code": f">>> from otter_ref03.checks import {check}\n>>> {check}(CausalAttention)\nTrue\n"}]}],
    }) + "\n"


def build_assignment(venv: Path, folder: Path) -> Path:
    """The autograder zip, made by `otter generate` from the tests and the support package."""
    (folder / "tests").mkdir(parents=True)
    for name, check in TESTS.items():
        (folder / "tests" / f"{name}.py").write_text(ok_test(name, check))
    support = folder / "otter_ref03"
    support.mkdir()
    (support / "__init__.py").write_text("")
    (support / "checks.py").write_text(textwrap.dedent(CHECKS))
    shutil.copyfile(SOLUTION, support / "solution.py")
    zip_path = folder / "autograder.zip"
    proc = subprocess.run([str(venv / "bin" / "otter"), "generate", "-t", "tests", "-o", str(zip_path),
                           "--no-config", "--no-requirements", "--no-environment", "otter_ref03"],
                          cwd=folder, capture_output=True, text=True)
    if proc.returncode != 0 or not zip_path.is_file():
        raise SystemExit(f"otter generate failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return zip_path


# -- the environment ---------------------------------------------------------------------------
def otter_version(venv: Path) -> str | None:
    python = venv / "bin" / "python"
    if not python.is_file():
        return None
    proc = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('otter-grader')); "
                           "import torch, ipykernel"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def ensure_venv(venv: Path) -> None:
    if otter_version(venv) == OTTER_VERSION:
        print(f"reusing {venv} (otter-grader {OTTER_VERSION})")
        return
    print(f"installing {' '.join(OTTER_REQUIREMENTS)} into {venv} (a few minutes) ...", flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    if not (venv / "bin" / "python").is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *OTTER_REQUIREMENTS])
    if proc.returncode != 0 or otter_version(venv) != OTTER_VERSION:
        raise SystemExit(f"could not install {' '.join(OTTER_REQUIREMENTS)} into {venv}")


# -- the files ---------------------------------------------------------------------------------
def pick_files(count: int) -> list[Path]:
    """The solution and count-1 corpus files spread evenly over the sorted, non-hanging corpus."""
    pool = [p for p in sorted(CORPUS.glob("*.py")) if "timeout" not in p.name]
    k = min(count - 1, len(pool))
    return [SOLUTION] + [pool[(i * len(pool)) // k] for i in range(k)] if k > 0 else [SOLUTION]


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


# -- the runs ----------------------------------------------------------------------------------
def otter_run(venv: Path, autograder: Path, submission: Path, out: Path) -> tuple[float, tuple[float, float] | None]:
    """One cold `otter run`: (seconds, (score, possible)) or None when Otter wrote no results."""
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    proc = subprocess.run([str(venv / "bin" / "otter"), "run", "-a", str(autograder), "-o", str(out), "--no-logo",
                           str(submission)], capture_output=True, text=True, cwd=out)
    elapsed = time.perf_counter() - start
    results = out / "results.json"
    if proc.returncode != 0 or not results.is_file():
        sys.stderr.write(f"otter run {submission.name} exited {proc.returncode}: {proc.stderr[-600:]}\n")
        return elapsed, None
    tests = json.loads(results.read_text()).get("tests", [])
    return elapsed, (sum(t.get("score", 0) or 0 for t in tests), sum(t.get("max_score", 0) or 0 for t in tests))


def kit_run(submission: Path) -> tuple[float, tuple[float, float] | None]:
    """One cold `grade exercise 3 FILE --json`: (seconds, (score, max_score))."""
    start = time.perf_counter()
    proc = subprocess.run([*GRADE_CMD, "exercise", "3", str(submission), "--json"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    try:
        doc = json.loads(proc.stdout)
        return elapsed, (doc["score"], doc["max_score"])
    except (ValueError, KeyError):
        sys.stderr.write(f"grade exercise 3 {submission.name} exited {proc.returncode}: {proc.stderr[-600:]}\n")
        return elapsed, None


def kit_batch(subs: Path, out: Path, jobs: int) -> tuple[float, dict[str, tuple[float, float]]]:
    start = time.perf_counter()
    proc = subprocess.run([*GRADE_CMD, "batch", str(subs), "--jobs", str(jobs), "--exercises", "3", "-o", str(out),
                           "-q"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or not out.is_file():
        raise SystemExit(f"grade batch exited {proc.returncode}: {proc.stderr[-1500:]}")
    rows = json.loads(out.read_text())["rows"]
    return elapsed, {r["submission"]: (r["exercises"][0]["score"], r["exercises"][0]["max_score"]) for r in rows}


def otter_cohort(venv: Path, autograder: Path, files: dict[str, Path], out: Path, jobs: int):
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = dict(zip(files, pool.map(lambda item: otter_run(venv, autograder, item[1], out / item[0]),
                                        files.items())))
    elapsed = time.perf_counter() - start
    times = sorted(t for t, _ in done.values())
    print(f"    each otter run in the cohort: median {statistics.median(times):.2f} s (min {times[0]:.2f}, "
          f"max {times[-1]:.2f})")
    return elapsed, {name: result for name, (_, result) in done.items()}


def verdict(score: tuple[float, float] | None) -> str:
    if score is None:
        return "none"
    return "pass" if score[1] and score[0] >= score[1] else "fail"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="Otter's venv: reused if it has otter 7.0.0")
    parser.add_argument("--files", type=int, default=16, help="how many exercise-3 files (the solution first)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel slots for both cohorts")
    parser.add_argument("--keep", type=Path, help="keep the assignment, submissions and results in this folder")
    args = parser.parse_args()
    ensure_venv(args.venv)
    files = pick_files(args.files)
    tmp = Path(tempfile.mkdtemp(prefix="attention-kit-otter-")) if args.keep is None else args.keep
    tmp.mkdir(parents=True, exist_ok=True)
    os.chmod(tmp, 0o755)  # the kit's workers run as another user
    try:
        autograder = build_assignment(args.venv, tmp / "assignment")
        named = {f"{i:02d}_{p.stem}": p for i, p in enumerate(files)}
        subs = tmp / "subs"
        for name, path in named.items():
            (subs / name).mkdir(parents=True)
            shutil.copyfile(path, subs / name / FILE_NAME)
        flat = {name: subs / name / FILE_NAME for name in named}
        # warm the file cache for both tools (not timed)
        otter_run(args.venv, autograder, SOLUTION, tmp / "warm" / "otter")
        kit_run(SOLUTION)

        print(f"\n(a) per file, cold process each, {len(files)} files; load before: {loadavg()}")
        per_file = {}
        for i, (name, path) in enumerate(flat.items()):
            if i % 2 == 0:
                o = otter_run(args.venv, autograder, path, tmp / "otter_single" / name)
                k = kit_run(path)
            else:
                k = kit_run(path)
                o = otter_run(args.venv, autograder, path, tmp / "otter_single" / name)
            per_file[name] = (o, k)
            print(f"  {name:<40} otter {o[0]:6.2f} s  kit {k[0]:6.2f} s  ratio {o[0] / k[0]:5.2f}", flush=True)
        load_a = loadavg()
        print(f"    load after: {load_a}")

        print(f"\n(b) cohort, {args.jobs} slots; load before: {loadavg()}")
        t_kit, kit_scores = kit_batch(subs, tmp / "gradebook.json", args.jobs)
        load_b1 = loadavg()
        print(f"  grade batch --jobs {args.jobs} --exercises 3: {t_kit:.2f} s (load after: {load_b1})")
        t_otter, otter_scores = otter_cohort(args.venv, autograder, flat, tmp / "otter_cohort", args.jobs)
        load_b2 = loadavg()
        print(f"  otter run x {len(flat)}, {args.jobs} at a time:    {t_otter:.2f} s (load after: {load_b2})")

        print("\nscores (otter: 6 OK tests; kit: its hidden suite's points)")
        print(f"  {'file':<40} {'otter':>8} {'':4} {'kit':>8} {'':4} {'batch':>8}")
        disagree = []
        for name in flat:
            (o_t, o_s), (k_t, k_s) = per_file[name]
            b_s = kit_scores.get(name)
            fmt = lambda s: "-" if s is None else f"{s[0]:g}/{s[1]:g}"
            print(f"  {name:<40} {fmt(o_s):>8} {verdict(o_s):4} {fmt(k_s):>8} {verdict(k_s):4} {fmt(b_s):>8}")
            if verdict(o_s) != verdict(k_s):
                disagree.append(f"{name}: otter {verdict(o_s)}, kit {verdict(k_s)}")
            if verdict(otter_scores.get(name)) != verdict(o_s) or verdict(b_s) != verdict(k_s):
                disagree.append(f"{name}: a cohort run disagrees with the same tool's single run")
        print("pass/fail disagreements: " + ("none" if not disagree else ""))
        for line in disagree:
            print("  " + line)

        o_sum = sum(o[0] for o, _ in per_file.values())
        k_sum = sum(k[0] for _, k in per_file.values())
        med = statistics.median(o[0] / k[0] for o, k in per_file.values())
        print(f"\nper file: otter {o_sum:.1f} s, kit {k_sum:.1f} s for {len(files)} files: "
              f"ratio {o_sum / k_sum:.2f}x (median per-file ratio {med:.2f}x; target >= 4x)  load {load_a}")
        print(f"cohort:   otter {t_otter:.1f} s, kit {t_kit:.1f} s: ratio {t_otter / t_kit:.2f}x (target >= 10x)"
              f"  load {load_b1} / {load_b2}")
        missing = [n for n, (o, k) in per_file.items() if o[1] is None or k[1] is None]
        return 2 if len(missing) == len(per_file) else 0
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
