"""The held-out and real-world corpora (tests/corpus/NN/heldout/, NN/realworld/): measured and printed, per part.

Held-out files were written by someone who had not read the diagnoser and are never tuned on
(tests/corpus/HELDOUT.md); real-world files are published implementations adapted only where the
contract forces it (tests/corpus/REALWORLD.md). Their labels are the authors' reading of the code, so
the accuracy is reported, not required here; what is required: every buggy file fails (the suites see
the bug) and every file gets a diagnosis. A separate file from test_diagnosis.py so that the two run
on both cores.
"""
from pathlib import Path

import pytest

from tests.conftest import CORPUS
from tests.test_diagnosis import label, top1, verdict

PARTS = {"heldout": "[0-9][0-9]/heldout/*.py", "realworld": "[0-9][0-9]/realworld/*.py"}
FILES = sorted(f for pattern in PARTS.values() for f in CORPUS.glob(pattern))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_buggy_files_fail_with_a_diagnosis(path: Path):
    v = verdict(path)
    if label(path) != "pass":
        assert not v.passed and v.diagnoses, "a buggy file passed: the suite cannot see this bug"


def test_top1_accuracy_per_part(record_property):
    for part, pattern in PARTS.items():
        files = sorted(CORPUS.glob(pattern))
        hits, n, misses = top1(files)
        correct = [p for p in files if label(p) == "pass"]
        passed = sum(verdict(p).passed for p in correct)
        record_property("summary", f"diagnosis top-1 ({part}): {hits}/{n} = {hits / n:.1%}; correct files passing "
                        f"{passed}/{len(correct)}" + "".join(f"\n  miss {m}" for m in misses)
                        + "".join(f"\n  rejected {p.relative_to(CORPUS)}" for p in correct if not verdict(p).passed))
