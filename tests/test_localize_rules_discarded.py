"""grader/diagnosis/localize/rules/missing.py and dropout.py: a masking call or a dropout whose result is thrown away
(a statement of its own, not in place). Without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules, source
from tests.localize_helpers import scores_pair, stage


def test_a_masking_call_whose_result_is_dropped_is_the_missing_mask():
    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("masked_scores", 31, masked), stage("weights", 32, torch.softmax(masked, -1))]
    src = "def f(q, k, m):\n    s = q @ k\n    torch.where(m, -1e4, s)\n    w = s.softmax(-1)\n    return w\n"
    entries = [loc.Traced("matmul", 2, s), loc.Traced("softmax", 4, torch.softmax(s, -1))]
    found = rules.missing_step(loc.Alignment(entries, stages, source=src))
    assert found is not rules.ABSTAIN and found.line == 3 and "thrown away" in found.evidence, found
    kept = src.replace("    torch.where(m, -1e4, s)", "    s.masked_fill_(m, -1e4)")  # in place: not thrown away
    assert source.discarded_at(kept, "mask") == []
    assert rules.missing_step(loc.Alignment(entries, stages, source=kept)) is rules.ABSTAIN


def test_a_dropout_whose_result_is_dropped_is_the_missing_dropout_in_training_mode():
    g = torch.Generator().manual_seed(15)
    s, v = torch.randn(2, 5, 5, generator=g, dtype=torch.float64), torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    w = torch.softmax(s, -1)
    dropped = torch.where(torch.rand(2, 5, 5, generator=g) < 0.5, 0.0, 2 * w).double()
    stages = [stage("weights", 30, w), stage("dropped_weights", 31, dropped), stage("context", 32, dropped @ v)]
    src = ("class A:\n    def forward(self, s, v):\n        w = s.softmax(-1)\n        self.attn_drop(w)\n"
           "        return w @ v\n")
    entries = [loc.Traced("softmax", 3, w), loc.Traced("dropout", 4, dropped), loc.Traced("matmul", 5, w @ v)]
    found = rules.training_pass(loc.Alignment(entries, stages, train=True, source=src))
    assert found is not rules.ABSTAIN and found.line == 4 and "thrown away" in found.evidence, found
    assert rules.training_pass(loc.Alignment(entries, stages, train=False, source=src)) is None  # evaluation: no dropout
    inplace = src.replace("self.attn_drop(w)", "F.dropout(w, 0.1, inplace=True)")
    assert source.discarded_at(inplace, "dropout") == []
    assert rules.training_pass(loc.Alignment(entries, stages, train=True, source=inplace)) is rules.ABSTAIN
