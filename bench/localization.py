"""Is the reported line a bug line? "Where it goes wrong: line N" measured on each part of the labelled corpus.

    python bench/localization.py [dev|heldout|realworld ...] [--exercise N] [--files] [--json OUT]

Every buggy corpus file names the lines a fix must change (or where a missing step belongs) in a header
comment, `# bug-lines: 23, 24`, labelled by reading the file, never from what the grader reports. Each
labelled file is graded as bench/diagnosis_corpus.py grades it (one warm fork server, in this process) and
the verdict's reported line (Verdict.localization["line"], what the terminal shows as "Where it goes
wrong: line N", the JSON's "localization" and the HTML report's marked line) is counted as

  right  the reported line is one of the bug lines
  wrong  a line is reported and it is not a bug line (a correct line: worse than none)
  none   no line is reported (the grader abstained)

Prints per part (dev is what the localizer is tuned on; heldout and realworld are never tuned on) and per
exercise, then each wrong line (--files: every file).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.catalog import load_catalog  # noqa: E402
from grader.runner import grade  # noqa: E402
from grader.sandbox import Limits  # noqa: E402

from tests.corpus_parts import PARTS, UNSEEN, bug_lines  # noqa: E402
CORPUS = ROOT / "tests" / "corpus"


def header(path: Path) -> tuple[str, list[int] | None]:
    """(the `# expect:` label, the `# bug-lines:` numbers or None) from the file's leading comment lines."""
    label = path.read_text(encoding="utf-8").splitlines()[0].removeprefix("# expect: ").strip()
    return label, bug_lines(path)


def exercise_number(path: Path) -> str:
    return path.parent.name if path.parent.name.isdigit() else path.parent.parent.name


def outcome(line: int | None, bug_lines: list[int]) -> str:
    return "none" if line is None else "right" if line in bug_lines else "wrong"


def measure(path: Path, catalog) -> dict:
    label, bug_lines = header(path)
    v = grade(exercise=catalog.get(exercise_number(path)), path=path, device="cpu", limits=Limits(time_s=12), warm=True)
    loc = v.localization if isinstance(v.localization, dict) else None
    line = loc.get("line") if loc else None
    return {"file": str(path.relative_to(CORPUS)), "label": label, "bug_lines": bug_lines, "line": line,
            "stage": loc.get("stage") if loc else None, "evidence": loc.get("evidence") if loc else None,
            "diagnosis": v.diagnoses[0].id if v.diagnoses else ("pass" if v.passed else None),
            "outcome": outcome(line, bug_lines)}


def row(name: str, results: list[dict]) -> str:
    n = len(results)
    counts = {k: sum(r["outcome"] == k for r in results) for k in ("right", "wrong", "none")}
    pct = {k: f"{counts[k] / n:.0%}" if n else "-" for k in counts}
    return (f"{name:10} files {n:3}  right {counts['right']:3} ({pct['right']:>4})  wrong {counts['wrong']:3} "
            f"({pct['wrong']:>4})  none {counts['none']:3} ({pct['none']:>4})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("parts", nargs="*", default=list(PARTS))
    parser.add_argument("--exercise")
    parser.add_argument("--files", action="store_true", help="print every file, not only the wrong lines")
    parser.add_argument("--json", help="write every file's result to this file")
    args = parser.parse_args()
    catalog = load_catalog()
    everything = []
    for part in args.parts:
        files = sorted(f for f in CORPUS.glob(PARTS[part]) if header(f)[1] is not None)
        if args.exercise:
            files = [f for f in files if int(exercise_number(f)) == int(args.exercise)]
        results = [{**measure(f, catalog), "part": part} for f in files]
        everything += results
        print(row(part, results))
        by_exercise = defaultdict(list)
        for r in results:
            by_exercise[r["file"][:2]].append(r)
        for number in sorted(by_exercise):
            print("  " + row(f"ex {number}", by_exercise[number]))
        for r in results:
            if args.files or r["outcome"] == "wrong":
                print(f"    {r['outcome']:5} {r['file']:50} line {str(r['line']):>4} (bug lines {r['bug_lines']}) "
                      f"{r['stage'] or ''} [{r['diagnosis']}]")
        sys.stdout.flush()
    unseen = [r for r in everything if r["part"] in UNSEEN]
    if unseen and len({r["part"] for r in unseen}) > 1:
        print(row("unseen", unseen) + "   (" + " + ".join(sorted({r["part"] for r in unseen})) + ")")
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
