"""grader/diagnosis/localize/rules/values.py: a mask or a scale made on another line. Each rule on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules, source
from tests.localize_helpers import CLASS, SCALE_SOURCE, line_of, scale_alignment, scaled, scores_pair, stage


def test_a_mask_buffer_sliced_to_size_is_blamed_where_it_is_made():
    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("masked_scores", 31, masked)]
    diagonal = s.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(), float("-inf"))
    line = line_of("s2 = ")
    found = rules.value_built_before(loc.Alignment([loc.Traced("masked_fill", line, diagonal)], stages, source=CLASS))
    assert found is not rules.ABSTAIN and found.line == line_of("future = torch"), found
    other = loc.Alignment([loc.Traced("masked_fill", line_of("s3 = "), diagonal)], stages, source=CLASS)
    assert rules.value_built_before(other) is rules.ABSTAIN  # the slice, or the mask: not known


def test_an_inverted_mask_flipped_on_the_line_is_not_located():
    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("masked_scores", 31, masked)]
    inverted = s.masked_fill(~torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf"))
    al = loc.Alignment([loc.Traced("masked_fill", line_of("s4 = "), inverted)], stages, source=CLASS)
    assert "inverted" in al.how[0] and rules.value_built_before(al) is rules.ABSTAIN
    flipped = loc.Alignment([loc.Traced("masked_fill", line_of("s5 = "), inverted)], stages, source=CLASS)
    assert rules.value_built_before(flipped) is None  # a buffer flipped on the line: the line's own flip
    as_is = loc.Alignment([loc.Traced("masked_fill", line_of("s2 = "), inverted)], stages, source=CLASS)
    assert rules.value_built_before(as_is) is rules.ABSTAIN  # a buffer used as it is: built or used the wrong way


def test_a_scale_made_in_the_class_under_a_root_is_blamed_where_it_is_made():
    found = rules.value_built_before(scaled(line_of("s1 = "), 1.5))
    assert found is not rules.ABSTAIN and found.line == line_of("self.scale = "), found


def test_a_scale_made_elsewhere_without_a_root_is_not_located():
    """`temperature = float(d)` then `/ temperature`: the value or its use may be wrong."""
    assert rules.value_built_before(scaled(line_of("s6 = "), 3.0)) is rules.ABSTAIN


def test_a_constant_factor_comes_in_where_an_earlier_stage_is_scaled():
    g = torch.Generator().manual_seed(6)
    q, k = torch.randn(2, 5, 4, generator=g, dtype=torch.float64), torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    scores = q @ k.transpose(-2, -1)
    stages = [stage("queries", 10, q), stage("keys", 11, k), stage("scores", 12, scores), stage("scaled_scores", 12, scores / 2)]
    entries = [loc.Traced("linear", 20, q), loc.Traced("div", 20, q / 2), loc.Traced("linear", 21, k),
               loc.Traced("div", 21, k / 2), loc.Traced("matmul", 23, scores / 4)]
    al = loc.Alignment(entries, stages)
    found = rules.scaled_earlier(al)
    assert found is not None and found.line == 20, found
    assert loc.align(entries, stages).line == 20


def test_a_size_under_a_root_is_where_a_constant_factor_comes_from():
    from grader.diagnosis.localize import rules

    al = scale_alignment(6, 1.5)  # / math.sqrt(d) with another d: the line that sets d
    assert al.how[0].startswith("it equals the scaled scores times")
    found = rules.value_built_before(al)
    assert found is not None and found is not rules.ABSTAIN and found.line == 4, found
    assert rules.value_built_before(scale_alignment(7, 1.5)).line == 5  # * scale, scale = 1 / math.sqrt(d): where it is made
    assert rules.value_built_before(scale_alignment(8, 0.5)) is None  # / size: the line's own missing root


def test_a_mask_passed_by_name_is_blamed_unless_the_fill_differs():
    from grader.diagnosis.localize import rules

    s = torch.randn(2, 5, dtype=torch.float64)
    want = s.masked_fill(torch.tensor([False, False, False, True, True]), float("-inf"))
    stages = [stage("scores", 30, s), stage("masked_scores", 31, want)]
    other = s.masked_fill(torch.tensor([False, False, True, True, True]), float("-inf"))
    al = loc.Alignment([loc.Traced("masked_fill", 10, other)], stages, source=SCALE_SOURCE)
    found = rules.value_built_before(al)
    assert found.line == 9 and "built at line 9" in found.evidence, found
    zero = s.masked_fill(torch.tensor([False, False, False, True, True]), 0.0)
    assert rules.value_built_before(loc.Alignment([loc.Traced("masked_fill", 10, zero)], stages, source=SCALE_SOURCE)) is None


ADDITIVE = """
import math
def f(q, k, pad):
    scores = q @ k.transpose(-2, -1) / math.sqrt(4)
    ext = (1.0 - pad) * -10000.0
    scores = scores + ext
    return scores
"""


def test_an_additive_mask_that_differs_is_blamed_where_it_is_made():
    s, masked = scores_pair()
    stages = [stage("scaled_scores", 30, s), stage("masked_scores", 31, masked)]
    wrong = s + torch.ones(5, 5, dtype=torch.float64).tril() * -10000.0
    entries = [loc.Traced("div", 4, s), loc.Traced("add", 6, wrong)]
    found = rules.added_operand(loc.Alignment(entries, stages, source=ADDITIVE))
    assert found is not rules.ABSTAIN and found.line == 5 and "ext, made at line 5" in found.evidence, found
    scaled_stages = [stage("scores", 30, s), stage("scaled_scores", 31, s / 2)]
    assert rules.added_operand(loc.Alignment([loc.Traced("matmul", 4, s), loc.Traced("add", 6, s + 1)], scaled_stages,
                                             source=ADDITIVE)) is rules.ABSTAIN  # an addition where a scale belongs
    same = [loc.Traced("matmul", 4, s), loc.Traced("add", 4, s + 1)]  # `q @ k.T + 1 / sqrt(d)`: that line, by other rules
    assert rules.added_operand(loc.Alignment(same, scaled_stages, source=ADDITIVE)) is None
    mul = [entries[0], loc.Traced("mul", 6, wrong)]
    assert rules.added_operand(loc.Alignment(mul, stages, source=ADDITIVE)) is None  # not an addition: other rules


def test_a_mask_picked_from_a_buffer_on_its_own_line_is_blamed_where_the_buffer_is_made():
    src = CLASS.replace("        s2 = s1.masked_fill(self.future[:T, :T], float(\"-inf\"))\n",
                        "        m = self.future.bool()[:T, :T]\n        s2 = s1.masked_fill(m, float(\"-inf\"))\n")
    assert source.picks_attribute(source.parse(src), line_of("m = self", src)) == ("future", "prefix")
    assert source.mask_value(src, line_of("s2 = ", src)) == ("attribute", line_of("future = torch", src), False, "prefix")
    assert source.picks_attribute(source.parse(src), line_of("keep = ", src)) is None  # made from an argument
    multi = 'class A:\n    def __init__(self, n):\n        self.register_buffer(\n            "m", tril(n)\n        )\n' \
            '    def f(self):\n        return self.m\n'
    assert source.attribute_built_at(multi, 7, "m") == 4  # the value's own line, not the call's first


def test_half_precision_only_carried_by_a_move_is_not_located():
    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("scaled_scores", 31, s / 2)]
    low = (s / 2 * 1.3).bfloat16()
    moved = loc.Alignment([loc.Traced("matmul", 3, s), loc.Traced("__getitem__", 4, low[:, :]),
                           loc.Traced("mul", 5, low.double() * 1.01)], stages)
    assert rules.lost_precision(moved) is rules.ABSTAIN  # the cast happened where the trace does not follow
    cast = loc.Alignment([loc.Traced("matmul", 3, s), loc.Traced("bfloat16", 4, low),
                          loc.Traced("mul", 5, low.double() * 1.01)], stages)
    assert rules.lost_precision(cast).line == 4


def test_a_value_named_as_the_scale_is_blamed_where_it_is_made():
    src = "def f(q, k):\n    d_k = k.size(-1)\n    scale = d_k\n    s = q @ k.transpose(-2, -1) / scale\n    return s\n"
    found = rules.value_built_before(scaled(4, 0.5, src))
    assert found is not rules.ABSTAIN and found.line == 3, found
    other = src.replace("scale", "temperature")
    assert rules.value_built_before(scaled(4, 0.5, other)) is rules.ABSTAIN  # made or used wrongly: not known
    helper = "def g(k):\n    return k.size(-1)\ndef f(q, k):\n    scale = g(k)\n    s = q @ k.transpose(-2, -1) / scale\n"
    assert rules.value_built_before(scaled(5, 0.5, helper)) is rules.ABSTAIN  # made in g's body: not on line 4


def test_a_scale_from_sizes_unpacked_for_it_is_blamed_where_they_are_unpacked():
    src = ("import math\ndef f(q, k, v):\n    *_, n, d = v.shape\n    assert k.shape[-2] == n\n"
           "    s = q @ k.transpose(-2, -1)\n    return s / math.sqrt(d)\n")
    g = torch.Generator().manual_seed(26)
    q, k = torch.randn(2, 5, 4, generator=g, dtype=torch.float64), torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    scores = q @ k.transpose(-2, -1)
    stages = [stage("scores", 30, scores), stage("scaled_scores", 31, scores / 2)]
    al = loc.Alignment([loc.Traced("matmul", 5, scores), loc.Traced("div", 6, scores / 3)], stages, source=src)
    found = rules.value_built_before(al)
    assert found is not None and found is not rules.ABSTAIN and found.line == 3, found  # n is only checked
    shaping = src.replace("assert k.shape[-2] == n", "q = q.view(2, n, 4)")
    assert rules.value_built_before(loc.Alignment(al.entries, stages, source=shaping)) is None  # n shapes: the line picked d


def test_an_operand_made_from_the_mask_alone_is_not_where_the_scores_part():
    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("masked_scores", 31, masked)]
    keep = (~torch.ones(5, 5, dtype=torch.bool).triu(1)).double()
    entries = [loc.Traced("matmul", 9, s), loc.Traced("to", 10, keep, data=False), loc.Traced("mul", 11, s * keep)]
    al = loc.Alignment(entries, stages)
    assert al.pick[1].line == 11 and "holds 0" in al.how[0], al.how
    assert loc.align(entries, stages).line == 11


def test_a_tensor_whose_halves_the_reference_computes_is_computed_too():
    g = torch.Generator().manual_seed(27)
    x1, x2, c = (torch.randn(3, 4, generator=g, dtype=torch.float64) for _ in range(3))
    reference = [loc.Traced("mul", 40, x1 * c), loc.Traced("mul", 41, x2 * c)]
    assert loc.also_computed(loc.Traced("mul", 9, torch.cat([x1, x2], -1) * torch.cat([c, c], -1)), reference)
    assert not loc.also_computed(loc.Traced("mul", 9, torch.cat([x1, -x2], -1) * torch.cat([c, c], -1)), reference)
