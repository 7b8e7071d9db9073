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
