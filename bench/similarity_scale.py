"""How long `grade similarity` takes on a large cohort: N submissions x every exercise (default 300 x 12).

    python bench/similarity_scale.py [--submissions 300] [--html]

Each submission's file is, per exercise, one of the kit's correct solutions (the reference or a corpus
file), renamed and reformatted differently for each student, so every file is parsed, normalised and
fingerprinted and most pairs share a good part of their code. Prints the time to build the cohort, the
comparison (wall and CPU, the workers' included: on a busy machine the CPU time is the fair number),
the text summary and (with --html) the side-by-side pages, and the findings.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.catalog import load_catalog  # noqa: E402
from grader.instructor.similarity import similarity_report  # noqa: E402
from grader.instructor.similarity_view import summary_text, write_html  # noqa: E402


def variants(ex) -> list[str]:
    corpus = ROOT / "tests" / "corpus" / f"{ex.number:02d}"
    return [ex.solution_path.read_text()] + [p.read_text() for p in sorted(corpus.glob("pass_*.py"))]


def personal(text: str, rng: random.Random, student: int) -> str:
    """The same code with this student's names, comments and indentation."""
    names = sorted(set(re.findall(r"\b(?:q|k|v|att|scores|weights|out|y|mask|B|T|C)\b", text)))
    for name in names:
        text = re.sub(rf"\b{name}\b", f"{name}_{student}", text)
    indent = rng.choice(["    ", "  ", "\t"])
    return f"# student {student}\n" + text.replace("    ", indent)


def build(root: Path, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    exercises = load_catalog().exercises
    pools = {ex.number: variants(ex) for ex in exercises}
    for student in range(n):
        folder = root / f"student-{student:03d}" / "exercises"
        folder.mkdir(parents=True)
        for ex in exercises:
            (folder / ex.file).write_text(personal(rng.choice(pools[ex.number]), rng, student))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--html", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "subs"
        started = time.perf_counter()
        build(subs, args.submissions)
        built = time.perf_counter()
        cpu = os.times()
        report = similarity_report(submissions_dir=subs, jobs=args.jobs)
        compared = time.perf_counter()
        after = os.times()
        cpu_s = sum(after[:4]) - sum(cpu[:4])  # this process and its fingerprinting workers
        text = summary_text(report)
        summarised = time.perf_counter()
        pages = write_html(report, Path(tmp) / "html") if args.html else []
        written = time.perf_counter()
    files = len(report.files)
    print(f"{args.submissions} submissions, {files} files: cohort written in {built - started:.1f} s; "
          f"compared in {compared - built:.2f} s wall, {cpu_s:.2f} s CPU ({1000 * cpu_s / max(files, 1):.2f} ms "
          f"a file) with --jobs {args.jobs}; "
          f"summary in {summarised - compared:.3f} s ({len(text.splitlines())} lines)"
          + (f"; {len(pages)} HTML pages in {written - summarised:.1f} s" if args.html else ""))
    print(f"{len(report.reference)} reference copies, {len(report.public)} public matches, "
          f"{len(report.clusters)} clusters, {len(report.pairs)} pairs, {len(report.skipped)} skipped")


if __name__ == "__main__":
    main()
