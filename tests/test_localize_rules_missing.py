"""grader/diagnosis/localize/rules/missing.py: a missing step. Each rule on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules
from tests.localize_helpers import scores_pair, stage


def test_a_missing_step_is_reported_where_the_last_match_is_or_where_the_mask_runs_too_late():
    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("masked_scores", 31, masked), stage("weights", 32, torch.softmax(masked, -1))]
    entries = [loc.Traced("matmul", 3, s), loc.Traced("softmax", 5, torch.softmax(s, -1))]
    plain = "def f(q, k):\n    s = q @ k\n    s = s\n    w = s.softmax(-1)\n    return w\n"
    assert rules.missing_step(loc.Alignment(entries, stages, source=plain)) is rules.ABSTAIN  # a mask: where is taste
    unscaled = [stage("scores", 30, s), stage("scaled_scores", 31, s / 2), stage("weights", 32, torch.softmax(s / 2, -1))]
    assert rules.missing_step(loc.Alignment(entries, unscaled, source=plain)) is rules.ABSTAIN  # two lines: either
    one = [loc.Traced("matmul", 4, s), loc.Traced("softmax", 4, torch.softmax(s, -1))]  # softmax(q @ k) on one line
    found = rules.missing_step(loc.Alignment(one, unscaled, source=plain))
    assert found is not None and found.line == 4 and found.cause == "no_scaling", found
    branch = "def f(q, k, m):\n    if m is None:\n        s = q @ k\n    else:\n        s = (q @ k).masked_fill(m, 0)\n    return s.softmax(-1)\n"
    entries = [loc.Traced("matmul", 3, s), loc.Traced("softmax", 6, torch.softmax(s, -1))]
    assert rules.missing_step(loc.Alignment(entries, stages, source=branch)) is rules.ABSTAIN  # never ran
    late = "def f(q, k, m):\n    s = q @ k\n    w = s.softmax(-1)\n    w = w.masked_fill(m, 0)\n    return w\n"
    entries = [loc.Traced("matmul", 2, s), loc.Traced("softmax", 3, torch.softmax(s, -1)), loc.Traced("masked_fill", 4, s)]
    found = rules.missing_step(loc.Alignment(entries, stages, source=late))
    assert found is not None and found.line == 4 and "after it" in found.evidence, found  # ran after the softmax


def test_a_skipped_step_that_changes_some_rows_is_located_only_on_one_line():
    """The weights of a query with no key are zeroed by the reference and not by the submission: the product equals the
    reference's output in every other row. On one line with the softmax (`softmax(s) @ v`) that line; else the step
    belongs after the softmax's line or in front of the product's, either as right: no line."""
    g = torch.Generator().manual_seed(6)
    w, v = torch.randn(2, 4, 4, generator=g, dtype=torch.float64).softmax(-1), torch.randn(2, 4, 3, generator=g, dtype=torch.float64)
    gone = torch.zeros(2, 4, 1, dtype=torch.bool)
    gone[1, 0] = True
    zeroed = w.masked_fill(gone, 0.0)
    stages = [stage("weights", 10, w), stage("zeroed_weights", 11, zeroed), stage("output", 12, zeroed @ v)]
    one_line = [loc.Traced("softmax", 3, w), loc.Traced("matmul", 3, w @ v)]
    found = rules.step_skipped(loc.Alignment(one_line, stages))
    assert found is not None and found.line == 3 and found.stage == "zeroed_weights"
    two_lines = [loc.Traced("softmax", 3, w), loc.Traced("matmul", 4, w @ v)]
    assert rules.step_skipped(loc.Alignment(two_lines, stages)) is rules.ABSTAIN
    other = [loc.Traced("softmax", 3, w), loc.Traced("matmul", 3, w @ (v * 2))]  # every row differs: not this rule's
    assert rules.step_skipped(loc.Alignment(other, stages)) is None
