"""grader/diagnosis/localize/rules/tensors.py: questions about tensors alone. Each rule on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc


def test_a_tensor_the_reference_computes_times_a_constant():
    from grader.diagnosis.localize import rules

    r = torch.randn(2, 3, 4, dtype=torch.float64)
    reference = [loc.Traced("exp", 9, r + 1), loc.Traced("matmul", 12, r)]
    assert "of line 12 times 0.5" in rules.scaled_reference(loc.Traced("mul", 30, r * 0.5), reference)
    assert rules.scaled_reference(loc.Traced("mul", 30, r.flip(0)), reference) is None
