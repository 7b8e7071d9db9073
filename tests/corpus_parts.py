"""The labelled corpus's parts (tests/corpus/NN/<part>/): one table for the tests, their summary and bench/.

dev is what the diagnoser is tuned on; every other part was written by someone who had not read it and is
measured, never tuned on (tests/corpus/HELDOUT.md, REALWORLD.md, FRESH.md).
"""
import re
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
PARTS = {"dev": "[0-9][0-9]/*.py", "heldout": "[0-9][0-9]/heldout/*.py", "realworld": "[0-9][0-9]/realworld/*.py",
         "fresh": "[0-9][0-9]/fresh/*.py", "fresh2": "[0-9][0-9]/fresh2/*.py",
         "realworld2": "[0-9][0-9]/realworld2/*.py", "fresh3": "[0-9][0-9]/fresh3/*.py",
         "fresh4": "[0-9][0-9]/fresh4/*.py", "realworld3": "[0-9][0-9]/realworld3/*.py",
         "fresh5": "[0-9][0-9]/fresh5/*.py", "realworld4": "[0-9][0-9]/realworld4/*.py",
         "fresh6": "[0-9][0-9]/fresh6/*.py", "realworld5": "[0-9][0-9]/realworld5/*.py",
         "fresh7": "[0-9][0-9]/fresh7/*.py", "realworld6": "[0-9][0-9]/realworld6/*.py",
         "fresh8": "[0-9][0-9]/fresh8/*.py", "realworld7": "[0-9][0-9]/realworld7/*.py"}
UNSEEN = tuple(part for part in PARTS if part != "dev")


def files(*parts: str) -> list[Path]:
    return sorted(f for part in parts for f in CORPUS.glob(PARTS[part]))


def part_of(path: Path) -> str:
    folder = Path(path).parent.name
    return folder if folder in PARTS else "dev"


BUG_LINES = re.compile(r"^# bug-lines:\s*(\d+(?:\s*,\s*\d+)*)\s*$")


def bug_lines(path: Path) -> list[int] | None:
    """The `# bug-lines:` numbers of a buggy file's leading comment (where a fix belongs), or None."""
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        if m := BUG_LINES.match(line):
            return [int(n) for n in m.group(1).split(",")]
    return None


def line_outcome(path: Path, verdict) -> str | None:
    """right / wrong / none: the verdict's reported line against the file's bug lines (None: no bug lines)."""
    lines = bug_lines(path)
    if lines is None:
        return None
    loc = verdict.localization if isinstance(verdict.localization, dict) else None
    line = loc.get("line") if loc else None
    return "none" if line is None else "right" if line in lines else "wrong"
