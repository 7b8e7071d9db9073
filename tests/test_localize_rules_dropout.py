"""grader/diagnosis/localize/rules/dropout.py: dropout. Each rule on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules
from tests.localize_helpers import stage


def test_a_missing_dropout_is_located_only_where_the_weights_are_made_and_used():
    g = torch.Generator().manual_seed(14)
    s, v = torch.randn(2, 5, 5, generator=g, dtype=torch.float64), torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    w = torch.softmax(s, -1)
    dropped = torch.where(torch.rand(2, 5, 5, generator=g) < 0.5, 0.0, 2 * w).double()
    stages = [stage("weights", 30, w), stage("dropped_weights", 31, dropped), stage("context", 32, dropped @ v)]
    entries = [loc.Traced("softmax", 7, w), loc.Traced("matmul", 9, w @ v)]
    assert rules.training_pass(loc.Alignment(entries, stages, train=True)) is rules.ABSTAIN  # after 7 or before 9: taste
    one = [loc.Traced("softmax", 7, w), loc.Traced("matmul", 7, w @ v)]
    found = rules.training_pass(loc.Alignment(one, stages, train=True))
    assert found is not rules.ABSTAIN and found.line == 7 and "used without it at line 7" in found.evidence, found


def test_a_dropout_active_in_evaluation_with_its_rate_set_on_another_line_is_not_located():
    g = torch.Generator().manual_seed(24)
    w = torch.softmax(torch.randn(2, 5, 5, generator=g, dtype=torch.float64), -1)
    dropped = torch.where(torch.rand(2, 5, 5, generator=g) < 0.5, 0.0, 2 * w).double()
    stages = [stage("weights", 30, w), stage("dropped_weights", 31, w), stage("context", 32, w)]
    src = ("class A:\n    def forward(self, s):\n        p = self.rate if self.train else 0.0\n"
           "        w = s.softmax(-1)\n        return F.dropout(w, p=p)\n")
    entries = [loc.Traced("softmax", 4, w), loc.Traced("dropout", 5, dropped)]
    assert rules.dropout_misplaced(loc.Alignment(entries, stages, source=src)) is rules.ABSTAIN
    here = src.replace("p=p", "p=0.5")
    assert rules.dropout_misplaced(loc.Alignment(entries, stages, source=here)).line == 5
