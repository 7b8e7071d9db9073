"""grader/diagnosis/localize/rules/ambiguous.py: the cases that abstain. Each rule on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules
from tests.localize_helpers import scores_pair, stage


def test_an_unexplained_difference_on_a_move_or_an_untraced_value_is_not_located():
    g = torch.Generator().manual_seed(9)
    x, y = torch.randn(2, 5, 4, generator=g, dtype=torch.float64), torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    stages = [stage("queries", 10, x), stage("scores", 12, x @ x.transpose(-2, -1))]
    src = "def f(x, n):\n    h = float(n)\n    a = x @ x.transpose(-2, -1)\n    b = a[:, :, :n]\n    c = a * h\n    return b, c\n"
    other = (y @ y.transpose(-2, -1))

    def at(op: str, line: int) -> loc.Alignment:
        return loc.Alignment([loc.Traced("matmul", 3, x), loc.Traced(op, line, other)], stages, source=src)

    assert rules.unexplained_elsewhere(at("__getitem__", 4)) is rules.ABSTAIN  # picks from line 3's tensor
    assert rules.unexplained_elsewhere(at("mul", 5)) is rules.ABSTAIN  # reads h, made on line 2 (not a size)
    assert rules.unexplained_elsewhere(at("matmul", 3)) is None
    rounded = [loc.Traced("to", 3, x.float()), loc.Traced("matmul", 3, other)]  # float32 on the way: rounding
    assert rules.unexplained_elsewhere(loc.Alignment(rounded, stages, source=src)) is rules.ABSTAIN
    wide = torch.randn(2, 5, 2, 5, generator=g, dtype=torch.float64)  # the size of the scores by chance, another last dim
    stages = [stage("queries", 10, x), stage("scores", 12, wide)]
    wider = torch.randn(2, 5, 10, generator=g, dtype=torch.float64)
    al = loc.Alignment([loc.Traced("matmul", 3, x), loc.Traced("linear", 3, wider)], stages, source=src)
    assert rules.unexplained_elsewhere(al) is rules.ABSTAIN


def test_several_masking_calls_that_ran_are_not_located():
    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("masked_scores", 31, masked)]
    half = s.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(3), float("-inf"))
    src = "def f(s, a, b):\n    s = s.masked_fill(a, -1e9)\n    s = s.masked_fill(b, -1e9)\n    return s\n"
    entries = [loc.Traced("matmul", 1, s), loc.Traced("masked_fill", 2, half), loc.Traced("masked_fill", 3, masked * 2)]
    assert rules.several_masks(loc.Alignment(entries, stages, source=src)) is rules.ABSTAIN
    assert rules.several_masks(loc.Alignment(entries[:2], stages, source=src)) is None


def test_a_product_before_the_last_match_means_another_order():
    g = torch.Generator().manual_seed(4)
    k, c = torch.randn(2, 5, 4, generator=g, dtype=torch.float64), torch.randn(2, 8, 4, generator=g, dtype=torch.float64)
    stages = [stage("keys", 10, k), stage("cached_keys", 11, c), stage("scores", 12, torch.randn(2, 5, 8, generator=g, dtype=torch.float64))]
    entries = [loc.Traced("linear", 2, k), loc.Traced("matmul", 3, k @ k.transpose(-2, -1)), loc.Traced("cat", 5, c),
               loc.Traced("linear", 6, torch.randn(2, 5, 8, generator=g, dtype=torch.float64))]
    assert rules.out_of_order(loc.Alignment(entries, stages)) is rules.ABSTAIN
    assert rules.out_of_order(loc.Alignment([entries[0], entries[2], entries[3]], stages)) is None


def test_another_fill_on_the_same_positions_is_the_fill_line_only_when_nothing_after_the_softmax_may_zero_rows():
    g = torch.Generator().manual_seed(5)
    s, v = torch.randn(2, 4, 4, generator=g, dtype=torch.float64), torch.randn(2, 4, 3, generator=g, dtype=torch.float64)
    gone = torch.zeros(2, 4, 4, dtype=torch.bool)
    gone[1] = True  # a sequence with no key left
    low = torch.finfo(torch.float64).min
    ref = s.masked_fill(gone, low)
    stages = [stage("scores", 10, s), stage("masked_scores", 11, ref), stage("weights", 12, ref.softmax(-1)),
              stage("zeroed_weights", 13, ref.softmax(-1).masked_fill(gone, 0.0))]
    inf = s.masked_fill(gone, float("-inf"))
    p = inf.softmax(-1)
    plain = [loc.Traced("matmul", 1, s), loc.Traced("masked_fill", 2, inf), loc.Traced("softmax", 3, p),
             loc.Traced("matmul", 4, p @ v)]
    al = loc.Alignment(plain, stages)
    assert "another fill value" in al.how[0] and al.pick[1].line == 2
    assert rules.fill_then_more(al) is None  # -inf, softmax, product: the fill line (first_difference) names it
    assert rules.first_difference(al).line == 2
    zeroing = plain[:3] + [loc.Traced("mul", 4, p * 0.0), loc.Traced("matmul", 5, p @ v)]  # weights * alive: NaN stays
    assert rules.fill_then_more(loc.Alignment(zeroing, stages)) is rules.ABSTAIN
    bert = s - 10000.0 * gone.double()  # an additive mask: finite, the row's softmax is the thing to zero
    q = bert.softmax(-1)
    additive = [plain[0], loc.Traced("sub", 2, bert), loc.Traced("softmax", 3, q), loc.Traced("matmul", 4, q @ v)]
    al = loc.Alignment(additive, stages)
    assert "another fill value" in al.how[0]  # scores - 10000 block as the fill does
    assert rules.fill_then_more(al) is rules.ABSTAIN
