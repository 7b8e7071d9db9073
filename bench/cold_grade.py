"""Cold single-exercise grade time as a ratio to `python -c "import torch"`, measured in one run.

Usage: python bench/cold_grade.py [--runs 7] [--exercise 4]
Alternates the two commands so machine noise hits both alike; prints medians and the ratio.

Issue 23, item 4 (target 1.3x): 1.47x in one run of 5 (import torch 3.16 s, grade 4.63 s, load 1.5-3.3), about
where it was (1.46x). A cold grade is the grader's own torch import plus, in series, its other imports and
the policy check (~0.6 s of the 1.5 s over torch, before the worker starts), one pytest session (the kept
session helps only later grades in the same process) and one /proc scan on the worker's kill (was ten).
Seventh session (batched requests), before (48b9ff7) and after, back to back, `--runs 7`: 1.53x before, 1.60x
after (load 2.6-3.2; an earlier pair of 5 runs: 1.21x and 1.64x, the grade's runs spread 3.3-7.7 s). The noise is
larger than the change: `grade exercise 4` on the solution, the two trees alternating four times, took 7.04 s of
CPU (grader and worker) and 5.87 s wall before, 6.65 s and 5.43 s after (medians).
Eighth session (a grade's repeated run calls answered once, the reference module reset instead of copied): the kit
before (a8ff028, PYTHONPATH) and after, alternating with `import torch`, 7 runs, load 10-11: import torch took
11.4-34.4 s, so nothing can be read from it (medians: before 0.95x, after 1.15x; per pair after/before 0.91, 0.88,
0.63, 0.95, 1.20, 1.16, 1.01). A cold grade is two torch imports (grader, worker) and the grader's other imports
(pytest ~0.3 of them, click and rich, the policy); the changes above only shorten the suite that follows.
Ninth session: runner imports pytest after the worker has started (it was 0.8 s of the 2.6 s of imports before the
worker spawned, at load ~7). Old (0dbdad5) and new alternating with import torch, 5 runs, load 5-7.6: 1.41x old,
1.51x new (new/old 1.07; per pair 1.15, 0.92, 1.67, 1.17, 0.88): no gain that shows through this machine's noise.
Tenth session: old (7541771) new new old, each `grade exercise 4` and `exercise 2` on the solution beside one
`import torch`, load 9-10.5: exercise 4 1.26, 1.27x old, 1.14, 1.34x new (CPU of the grade and its worker 4.19, 3.67
-> 4.01, 4.18 s: the same); exercise 2 1.68, 1.65x old, 1.33, 1.01x new (4.75, 4.05 -> 4.25, 3.93 s): its first
expected_shapes no longer imports sympy through torch.broadcast_shapes.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from grader.catalog import load_catalog


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0,):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--exercise", default="4")
    args = parser.parse_args()
    ex = load_catalog().get(args.exercise)
    grade = Path(sys.executable).with_name("grade")
    grade_cmd = [str(grade) if grade.is_file() else sys.executable, *([] if grade.is_file() else ["-m", "grader"]),
                 "exercise", str(ex.number), str(ex.solution_path)]
    torch_cmd = [sys.executable, "-c", "import torch"]
    timed(torch_cmd), timed(grade_cmd)  # warm the file cache
    torch_times, grade_times = [], []
    for _ in range(args.runs):
        torch_times.append(timed(torch_cmd))
        grade_times.append(timed(grade_cmd))
    t, g = statistics.median(torch_times), statistics.median(grade_times)
    print(f"import torch      median {t:.2f} s  ({', '.join(f'{x:.2f}' for x in torch_times)})")
    print(f"grade exercise {ex.number}  median {g:.2f} s  ({', '.join(f'{x:.2f}' for x in grade_times)})")
    print(f"ratio {g / t:.2f} (target <= 1.3)")


if __name__ == "__main__":
    main()
