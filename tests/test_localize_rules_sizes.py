"""grader/diagnosis/localize/rules/raised.py: a reshape that raised on a size computed on another line. Without a
sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules, source
from tests.localize_helpers import stage

SRC = """
class A:
    def __init__(self, c, nh):
        self.nh = nh
        self.scale = 2.0
        self.proj = None
    def forward(self, x):
        B, T, C = x.size()
        hd = (C + 1) // self.nh
        q = self.proj(x).reshape(B, T, self.nh, hd)
        return q
"""


def _stages(q):
    g = torch.Generator().manual_seed(4)
    return [stage("queries", 30, q), stage("keys", 31, torch.randn(2, 5, 6, generator=g, dtype=torch.float64))]


def test_a_reshape_that_raises_on_one_size_computed_elsewhere_names_that_line():
    q = torch.zeros(2, 5, 6, dtype=torch.float64)
    assert source.sizes_computed_elsewhere(SRC, 10) == {9}
    al = loc.Alignment([loc.Traced("linear", 10, q)], _stages(q), {"type": "RuntimeError", "line": 10}, source=SRC)
    found = rules.raised_here(al)
    assert found.line == 9 and "size computed at line 9" in found.evidence, found


def test_a_reshape_given_two_computed_sizes_abstains_and_a_size_worked_out_on_the_line_is_its_own():
    q = torch.zeros(2, 5, 6, dtype=torch.float64)
    two = SRC.replace("B, T, C = x.size()", "B, T, C = x.size()\n        n = self.nh - 0").replace("self.nh, hd)", "n, hd)")
    assert source.sizes_computed_elsewhere(two, 11) == {9, 10}
    al = loc.Alignment([loc.Traced("linear", 11, q)], _stages(q), {"type": "RuntimeError", "line": 11}, source=two)
    assert rules.raised_here(al) is rules.ABSTAIN
    inline = SRC.replace("self.nh, hd)", "self.nh, hd * 2)")
    assert source.sizes_computed_elsewhere(inline, 10) is None
    al = loc.Alignment([loc.Traced("linear", 10, q)], _stages(q), {"type": "RuntimeError", "line": 10}, source=inline)
    assert rules.raised_here(al).line == 10


def test_a_reshape_of_a_tensor_the_reference_never_has_is_the_line_that_raised():
    q = torch.zeros(2, 5, 6, dtype=torch.float64)
    odd = torch.zeros(2, 5, 18, dtype=torch.float64)  # a fused projection reshaped as if it were the queries
    al = loc.Alignment([loc.Traced("linear", 10, odd)], _stages(q), {"type": "RuntimeError", "line": 10}, source=SRC)
    assert rules.raised_here(al).line == 10
    settled = SRC.replace("hd = (C + 1) // self.nh", "hd = x.shape[-1]")  # a size read from a shape is what it is
    assert source.sizes_computed_elsewhere(settled, 10) == set()


def test_a_reshape_given_a_size_its_function_is_passed_is_not_put_on_the_computed_one():
    helper = ("class A:\n    def __init__(self, d, nh):\n        self.nh = nh\n        self.hd = d // nh\n"
              "    def split(self, t, B, T):\n        return t.view(B, T, self.nh, self.hd)\n"
              "    def forward(self, x, c):\n        B, T, _ = x.shape\n        return self.split(self.kv(c), B, T)\n")
    assert source.sizes_computed_elsewhere(helper, 6) is None  # T may be the wrong one, passed by a caller
    q = torch.zeros(2, 5, 6, dtype=torch.float64)
    al = loc.Alignment([loc.Traced("linear", 9, q)], _stages(q), {"type": "RuntimeError", "line": 6}, source=helper)
    assert rules.raised_here(al) is rules.ABSTAIN
