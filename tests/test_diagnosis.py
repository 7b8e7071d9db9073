"""Diagnosis accuracy on the labelled corpus in tests/corpus/NN/*.py.

Each file starts with `# expect: <diagnosis id>` or `# expect: pass`. Buggy variants must fail,
correct alternatives must pass with no diagnosis, and at least 90% of the buggy variants must get
the expected id first (SPEC section 5; issue "Diagnosis").
"""
from functools import cache
from pathlib import Path

import pytest

from grader.catalog import load_catalog
from grader.runner import grade
from grader.sandbox import Limits
from tests.conftest import CORPUS

FILES = sorted(CORPUS.glob("[0-9][0-9]/*.py"))
TARGET = 0.90


def label(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect: "), f"{path} must start with '# expect: <id>'"
    return first.removeprefix("# expect: ").strip()


@cache
def verdict(path: Path):
    ex = load_catalog().get(path.parent.name)
    return grade(exercise=ex, path=path, device="cpu", limits=Limits(wall_s=12))


def test_corpus_is_big_enough():
    labels = [label(p) for p in FILES]
    assert sum(lbl != "pass" for lbl in labels) >= 40
    assert sum(lbl == "pass" for lbl in labels) >= 10
    assert {p.parent.name for p in FILES} == {f"{e.number:02d}" for e in load_catalog().exercises}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_verdict(path):
    v = verdict(path)
    if label(path) == "pass":
        assert v.passed, [(t.name, t.message) for t in v.failures()]
        assert v.diagnoses == []
    else:
        assert not v.passed, "a buggy variant passed: the suite cannot see this bug"
        assert v.diagnoses, "a failing submission must get at least one diagnosis"


def test_top1_accuracy(capsys):
    buggy = [p for p in FILES if label(p) != "pass"]
    hits, misses = 0, []
    for path in buggy:
        v = verdict(path)
        got = v.diagnoses[0].id if v.diagnoses else None
        if got == label(path):
            hits += 1
        else:
            misses.append(f"{path.parent.name}/{path.name}: expected {label(path)}, got {got}")
    accuracy = hits / len(buggy)
    with capsys.disabled():
        print(f"\ndiagnosis top-1 accuracy: {hits}/{len(buggy)} = {accuracy:.1%}" + "".join(f"\n  miss {m}" for m in misses))
    assert accuracy >= TARGET, misses
