"""grader/diagnosis/localize/rules/loop.py: a reference marking only its output. Each rule on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules
from tests.localize_helpers import stage


def test_a_divergence_on_a_move_or_in_a_shape_the_reference_never_has_is_not_located():
    g = torch.Generator().manual_seed(1)
    a, out = torch.randn(2, 3, generator=g, dtype=torch.float64), torch.randn(4, 3, generator=g, dtype=torch.float64)
    reference = [loc.Traced("mul", 50, a * 2)]
    assert rules.first_divergence(loc.Alignment([loc.Traced("float", 20, a * 3)], [stage("output", 60, out)], reference=reference)) is rules.ABSTAIN
    assert rules.first_divergence(loc.Alignment([loc.Traced("mul", 20, torch.ones(5, 5))], [stage("output", 60, out)], reference=reference)) is rules.ABSTAIN
    assert rules.first_divergence(loc.Alignment([loc.Traced("mul", 20, a * 3)], [stage("output", 60, out)], reference=reference)).line == 20


def test_a_divergence_on_a_line_right_elsewhere_with_extra_products_is_not_located():
    """A tile loop that also computes the tiles the reference skips (above the diagonal): the line that computes a
    tile the reference never does is right elsewhere; that tile may be extra work, not a wrong value."""
    g = torch.Generator().manual_seed(3)
    a, out = torch.randn(2, 3, generator=g, dtype=torch.float64), torch.randn(4, 3, generator=g, dtype=torch.float64)
    reference = [loc.Traced("matmul", 50, a), loc.Traced("div", 52, a / 3)]
    entries = [loc.Traced("matmul", 20, a), loc.Traced("matmul", 20, a * 7), loc.Traced("div", 22, a / 5)]
    al = loc.Alignment(entries, [stage("output", 60, out)], reference=reference)
    assert rules.first_divergence(al) is rules.ABSTAIN
    al = loc.Alignment(entries[1:], [stage("output", 60, out)], reference=reference)
    assert rules.first_divergence(al).line == 20  # as many products: a wrong value


def test_only_an_output_marked_lines_up_by_every_tensor_the_reference_computes():
    """A loop (exercise 10's blocks): the first line result the reference never computes, not the output's line;
    a step inside a line computed in another order (q @ k before the scale) is not a difference."""
    from grader.diagnosis.localize import rules

    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(2, 3, generator=g, dtype=torch.float64), torch.randn(2, 3, generator=g, dtype=torch.float64)
    out = torch.randn(4, 3, generator=g, dtype=torch.float64)
    reference = [loc.Traced("mul", 50, a * 2), loc.Traced("add", 51, a * 2 + b)]
    entries = [loc.Traced("mul", 20, a * 3), loc.Traced("div", 20, a * 2),  # a * 3 / 1.5 on one line: the same result
               loc.Traced("add", 21, a * 2 + b * 2), loc.Traced("cat", 22, out + 1)]
    al = loc.Alignment(entries, [stage("output", 60, out)], source="", reference=reference)
    assert rules.line_result(entries, 1) and not rules.line_result(entries, 0)
    assert rules.first_divergence(al).line == 21
    assert loc.align(entries, [stage("output", 60, out)], reference=reference).line == 21


def test_a_divergence_inside_a_helper_is_not_located():
    """The helper works on what a caller passed (a state, a block): the helper or the call may be wrong."""
    src = "def update(s, v):\n    m = s.amax(-1)\n    return m\n\ndef f(q, k):\n    s = q @ k\n    return update(s, k)\n"
    g = torch.Generator().manual_seed(4)
    a, out = torch.randn(2, 3, generator=g, dtype=torch.float64), torch.randn(4, 3, generator=g, dtype=torch.float64)
    reference = [loc.Traced("mul", 50, a * 2)]
    al = loc.Alignment([loc.Traced("amax", 2, a * 3)], [stage("output", 60, out)], reference=reference, source=src)
    assert rules.first_divergence(al) is rules.ABSTAIN
    al = loc.Alignment([loc.Traced("matmul", 6, a * 3)], [stage("output", 60, out)], reference=reference, source=src)
    assert rules.first_divergence(al).line == 6
