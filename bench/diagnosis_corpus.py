"""Diagnosis accuracy on each part of the labelled corpus, graded in one process from a warm fork server.

    python bench/diagnosis_corpus.py [dev|heldout|realworld|fresh ...] [--exercise N] [--every]

Prints, per part, buggy files whose first diagnosis is the label (top-1), correct files that pass,
and every miss (--every: every file, as `file: expected X, got Y`, the table of tests/corpus/REALWORLD.md). The dev part is what the diagnoser is tuned on; heldout was written by someone who
had not read the diagnoser; realworld is published code adapted to the contracts (tests/corpus/*.md).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.catalog import load_catalog  # noqa: E402
from grader.runner import grade  # noqa: E402
from grader.sandbox import Limits  # noqa: E402

from tests.corpus_parts import PARTS  # noqa: E402
CORPUS = ROOT / "tests" / "corpus"


def label(path: Path) -> str:
    return path.read_text(encoding="utf-8").splitlines()[0].removeprefix("# expect: ").strip()


def exercise_number(path: Path) -> str:
    return path.parent.name if path.parent.name.isdigit() else path.parent.parent.name


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("parts", nargs="*", default=list(PARTS))
    parser.add_argument("--exercise")
    parser.add_argument("--every", action="store_true", help="list every file, not only the misses")
    args = parser.parse_args()
    catalog = load_catalog()
    for part in args.parts:
        files = sorted(CORPUS.glob(PARTS[part]))
        if args.exercise:
            files = [f for f in files if int(exercise_number(f)) == int(args.exercise)]
        hits = buggy = passed = correct = 0
        misses, every = [], []
        for path in files:
            want = label(path)
            v = grade(exercise=catalog.get(exercise_number(path)), path=path, limits=Limits(time_s=3 if want == "timeout" else 20),
                      warm=True)
            got = "pass" if v.passed else (v.diagnoses[0].id if v.diagnoses else None)
            if want == "pass":
                correct += 1
                passed += got == "pass"
            else:
                buggy += 1
                hits += got == want
            line = f"{path.relative_to(CORPUS)}: expected {want}, got {got}"
            every.append(line)
            if got != want:
                misses.append(line)
        print(f"{part}: buggy top-1 {hits}/{buggy}" + (f" = {hits / buggy:.1%}" if buggy else "")
              + f"; correct passed {passed}/{correct}")
        for m in misses:
            print(f"  miss {m}")
        for line in every if args.every else ():
            print(f"  file {line}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
