"""grader/diagnosis/localize/rules/raised.py: a forward that raised. Each rule on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules, source
from tests.localize_helpers import SCALE_SOURCE, stage


def test_a_raise_on_a_tensor_shaped_elsewhere_or_in_a_helper():
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(3, 5, 4, generator=g, dtype=torch.float64), torch.randn(3, 5, 4, generator=g, dtype=torch.float64)
    stages = [stage("queries", 10, q), stage("keys", 11, k), stage("scores", 12, q @ k.transpose(-2, -1))]
    src = "def f(q, k):\n    kt = k.transpose(0, 1)\n    s = q @ kt\n    return s\n"
    entries = [loc.Traced("transpose", 2, k.transpose(0, 1))]
    found = rules.raised_here(loc.Alignment(entries, stages, {"type": "RuntimeError", "line": 3}, source=src))
    assert found.line == 2 and "shaped (5, 3, 4)" in found.evidence, found
    right = [loc.Traced("transpose", 2, k.transpose(-2, -1))]
    ref = [loc.Traced("transpose", 30, k.transpose(-2, -1))]  # a shape the reference has: the raising line
    assert rules.raised_here(loc.Alignment(right, stages, {"type": "RuntimeError", "line": 3}, source=src, reference=ref)).line == 3
    alias = "def f(q, k, x):\n    src = x\n    s = q @ src\n    return s\n"
    assert source.aliases(alias, 2) and not source.aliases(alias, 3)
    assert rules.raised_here(loc.Alignment([], stages, {"type": "RuntimeError", "line": 3}, source=alias)) is rules.ABSTAIN
    helper = "class A:\n    def split(self, t, n):\n        return t.view(n, -1)\n    def forward(self, x):\n        return self.split(x, 7)\n"
    assert source.in_helper(helper, 3) and not source.in_helper(helper, 5)
    assert rules.raised_here(loc.Alignment([], stages, {"type": "RuntimeError", "line": 3}, source=helper)) is rules.ABSTAIN


def test_a_masking_call_that_raises_points_at_the_line_shaping_its_mask():
    from grader.diagnosis.localize import rules

    s = torch.randn(2, 5, dtype=torch.float64)
    stages = [stage("scores", 30, s), stage("masked_scores", 31, s.masked_fill(torch.ones(2, 5, dtype=torch.bool).triu(1), float("-inf")))]
    al = loc.Alignment([loc.Traced("div", 6, s)], stages, {"type": "RuntimeError", "line": 10}, source=SCALE_SOURCE)
    found = rules.raised_here(al)
    assert found.line == 9 and "raised RuntimeError at line 10" in found.evidence


def test_a_raise_past_a_later_stage_abstains():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(3, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    s = q @ k.transpose(-2, -1)
    stages = [stage("queries", 10, q), stage("keys", 11, k), stage("values", 12, v), stage("scores", 13, s),
              stage("scaled_scores", 14, s / 2)]
    src = ("def f(self, x):\n    q = self.q(x)\n    k = self.k(x)\n    wei = q @ k.transpose(-2, -1)\n"
           "    wei = wei.masked_fill(self.tril == 0, 0.0)\n    v = self.v(x)\n    return wei @ v\n")
    entries = [loc.Traced("linear", 2, q), loc.Traced("linear", 3, k), loc.Traced("matmul", 4, s)]
    al = loc.Alignment(entries, stages, {"type": "RuntimeError", "line": 5}, source=src)
    assert al.failing.name == "values" and rules.raised_here(al) is rules.ABSTAIN
    # the same raise reading only tensors of earlier stages is the line that raised
    early = src.replace("wei.masked_fill(self.tril == 0, 0.0)", "k.masked_fill(self.tril == 0, 0.0)")
    found = rules.raised_here(loc.Alignment(entries, stages, {"type": "RuntimeError", "line": 5}, source=early))
    assert found is not rules.ABSTAIN and found.line == 5, found


def test_a_raise_in_a_helper_its_one_caller_passes_unshaped_values_is_its_own_line():
    stages = [stage("queries", 10, torch.zeros(2, 3)), stage("scores", 12, torch.zeros(2, 2))]
    helper = ("def attend(q, k):\n    s = torch.bmm(q, k.transpose(1, 2))\n    return s\n"
              "class A:\n    def forward(self, x):\n        return attend(self.W_query(x), self.W_key(x))\n")
    assert source.passed_unshaped(helper, 2)
    found = rules.raised_here(loc.Alignment([], stages, {"type": "IndexError", "line": 2}, source=helper))
    assert found is not rules.ABSTAIN and found.line == 2, found
    shaped = helper.replace("attend(self.W_query(x), self.W_key(x))", "attend(self.W_query(x).view(2, 3), x)")
    assert not source.passed_unshaped(shaped, 2)
    assert rules.raised_here(loc.Alignment([], stages, {"type": "IndexError", "line": 2}, source=shaped)) is rules.ABSTAIN
    twice = helper.replace("return attend(", "attend(x, x)\n        return attend(")
    assert not source.passed_unshaped(twice, 2)  # two callers: which one passed what does not fit is not known


def test_a_raise_on_a_size_chosen_elsewhere_or_an_operand_cast_elsewhere_names_that_line():
    g = torch.Generator().manual_seed(23)
    s = torch.randn(2, 5, 5, generator=g, dtype=torch.float64)
    stages = [stage("scores", 30, s), stage("masked_scores", 31, s.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf")))]
    src = ("class A:\n    def forward(self, x, s):\n        width = x.size(-1)\n"
           "        return s.masked_fill(self.future[:width, :width], float('-inf'))\n")
    al = loc.Alignment([loc.Traced("matmul", 9, s)], stages, {"type": "RuntimeError", "line": 4}, source=src)
    found = rules.raised_here(al)
    assert found.line == 3 and "size chosen at line 3" in found.evidence, found
    unpacked = src.replace("width = x.size(-1)", "B, width, C = x.shape")
    al = loc.Alignment([loc.Traced("matmul", 9, s)], stages, {"type": "RuntimeError", "line": 4}, source=unpacked)
    assert rules.raised_here(al).line == 4  # sizes unpacked from a shape are what they are: the line that raised
    v = torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    w = torch.softmax(s[:, :3], -1)  # 3 queries, 5 keys
    ctx = [stage("values", 29, v), stage("weights", 30, w), stage("context", 31, w @ v)]
    cast = "def f(s, v):\n    w = s.softmax(-1, dtype=torch.float32)\n    u = v * 1\n    return w @ u\n"
    entries = [loc.Traced("softmax", 2, w.float()), loc.Traced("mul", 3, v)]
    found = rules.raised_here(loc.Alignment(entries, ctx, {"type": "RuntimeError", "line": 4}, source=cast))
    assert found.line == 2 and "float32" in found.evidence, found


def test_a_raise_adding_a_mask_made_above_gives_no_line():
    """`s = s + bias_mask`, the mask made on the lines above (here by a function, not a module's forward): its shape is
    as suspect as the addition. A raise adding another name is the line's own."""
    g = torch.Generator().manual_seed(4)
    q, k = torch.randn(3, 5, 4, generator=g, dtype=torch.float64), torch.randn(3, 5, 4, generator=g, dtype=torch.float64)
    s = q @ k.transpose(-2, -1)
    stages = [stage("scores", 10, s), stage("masked_scores", 11, s.masked_fill(torch.ones(5, 5).triu(1).bool(), float("-inf")))]
    src = ("def f(q, k, n):\n    s = q @ k.transpose(-2, -1)\n    bias_mask = torch.zeros(n, n)\n"
           "    bias_mask = bias_mask.fill_(-1e9).triu(1)\n    s = s + bias_mask\n    return s\n")
    raised = {"type": "RuntimeError", "line": 5}
    entries = [loc.Traced("matmul", 2, s)]
    assert rules.raised_here(loc.Alignment(entries, stages, raised, source=src)) is rules.ABSTAIN
    other = src.replace("s + bias_mask", "s + offset").replace("bias_mask", "offset")
    found = rules.raised_here(loc.Alignment(entries, stages, raised, source=other))
    assert found is not None and found.line == 5, found
