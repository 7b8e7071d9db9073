"""Every skeleton fails its suite as "not started"; every reference solution passes, through the real CLI."""
import pytest

from grader.catalog import load_catalog
from tests.conftest import grade_json

EXERCISES = load_catalog().exercises


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.slug)
def test_solution_passes(ex):
    code, doc = grade_json("exercise", ex.number, ex.solution_path)
    failing = [(t["name"], t["message"]) for t in doc["tests"] if t["status"] != "passed"]
    assert code == 0 and doc["passed"], failing
    assert doc["score"] == doc["max_score"] > 0
    assert doc["diagnoses"] == []
    categories = {t["category"] for t in doc["tests"]}
    assert {"policy", "api", "numerics", "device"} <= categories


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.slug)
def test_skeleton_fails_as_not_started(ex):
    code, doc = grade_json("exercise", ex.slug, ex.skeleton_path)
    assert code == 1 and not doc["passed"]
    assert doc["state"] == "not_started"
    if ex.number == 5:  # the fix-the-bug skeleton runs: its failing tests and their cause show from the start
        assert doc["diagnoses"][0]["id"] == "heads_split_wrong"
    else:
        assert [d["id"] for d in doc["diagnoses"]] == ["not_started"]
    assert doc["score"] == 0 < doc["max_score"]


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.slug)
def test_skeleton_has_todos_and_contract(ex):
    text = ex.skeleton_path.read_text(encoding="utf-8")
    assert "# TODO" in text
    assert ex.entry in text
    if ex.number != 5:  # exercise 5 is the seed's buggy module: it runs, wrongly
        assert "raise NotImplementedError" in text


def test_metadata_is_complete():
    cat = load_catalog()
    numbers = [e.number for e in cat.exercises]
    assert numbers == sorted(numbers) == list(range(1, len(numbers) + 1))
    for ex in cat.exercises:
        assert len(ex.hints) >= 3 and ex.topics and ex.forbidden
        assert ex.skeleton_path.is_file() and ex.solution_path.is_file()
        assert ex.skeleton_path.name == ex.solution_path.name
    assert set(cat.points) == {"api", "shape", "numerics", "masking", "dropout", "device", "policy"}


def test_exercise_five_skeleton_is_wrong_not_broken():
    """The naive module runs and has the right shape, so only the numerics expose it."""
    import torch

    from grader.suites.harness import load_reference
    import importlib.util

    ex = load_catalog().get(5)
    spec = importlib.util.spec_from_file_location("skeleton5", ex.skeleton_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    naive = mod.MultiHeadAttention(8, 2)
    fixed = load_reference(ex)(8, 2)
    fixed.load_state_dict(naive.state_dict())
    x = torch.randn(2, 5, 8)
    assert naive(x).shape == fixed(x).shape == (2, 5, 8)
    assert not torch.allclose(naive(x), fixed(x), atol=1e-4)
