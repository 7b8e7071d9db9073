"""The right line or none (issue 21, item 1): the rules that abstain when the first difference may come from a value
the trace does not follow (a scale, a mask, a size made on another line), and those that name that line when it
alone explains the difference. Each is tested on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules, source

CLASS = """
import math
import torch
class A(torch.nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.d = d
        self.scale = 1.0 / math.sqrt(d)
        self.temperature = float(d)
        future = torch.ones(n, n).triu()
        self.register_buffer("future", future.bool())
        self.register_buffer("causal", torch.ones(n, n).tril())
    def forward(self, q, k, pad):
        T = q.shape[1]
        s1 = q @ k.transpose(-2, -1) * self.scale
        s2 = s1.masked_fill(self.future[:T, :T], float("-inf"))
        s3 = s1.masked_fill(self.future[1:T, :T], float("-inf"))
        keep = pad.view(2, 1, 5)
        s4 = s1.masked_fill(keep == 0, float("-inf"))
        s5 = s1.masked_fill(~self.causal.bool(), float("-inf"))
        s6 = q @ k.transpose(-2, -1) / self.temperature
        return s2, s3, s4, s5, s6
"""


def line_of(text: str, src: str = CLASS) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def stage(name: str, line: int, t: torch.Tensor) -> loc.Stage:
    return loc.Stage(name, line, t)


def test_what_a_mask_is_made_from():
    """A buffer (one hop to the local it is made from), a prefix slice, another slice, a flip on the call's line."""
    s2, s3, s4, s5 = (line_of(f"s{i} = ") for i in (2, 3, 4, 5))
    assert source.mask_value(CLASS, s2) == ("attribute", line_of("future = torch"), False, "prefix")
    assert source.mask_value(CLASS, s3)[3] == "other"
    assert source.mask_value(CLASS, s4) == ("one", line_of("keep = "), True, "none")
    assert source.mask_value(CLASS, s5) == ("attribute", line_of('"causal"'), True, "none")
    assert source.mask_value(CLASS, line_of("s6 = "))[0] == "here"  # no masking call
    assert source.mask_built_at(CLASS, s2) == (False, None)  # a raise: a buffer is the call's to slice
    assert source.mask_built_at(CLASS, s4) == (True, line_of("keep = "))


def test_where_a_setting_of_the_class_is_made():
    assert source.attribute_built_at(CLASS, line_of("s1 = "), "scale") == line_of("self.scale = ")
    assert source.attribute_built_at(CLASS, line_of("s1 = "), "d") is None  # a copy of an argument: a setting
    pair = "class A:\n    def __init__(self, d, h):\n        self.d, self.h = d, h\n    def f(self):\n        return self.d\n"
    assert source.attribute_built_at(pair, 5, "d") is None
    named = "class A:\n    def __init__(self, n):\n        b = tril(n)\n        self.register_buffer('m', b)\n    def f(self):\n        return self.m\n"
    assert source.attribute_built_at(named, 6, "m") == 3  # a buffer registered by name: where that local is made
    assert source.attributes_read_at(CLASS, line_of("s1 = ")) == ["scale"]
    assert source.attribute_uses(CLASS, line_of("s1 = "), "scale") == {line_of("s1 = ")}
    assert source.applies_root("x = math.sqrt(self.d)\n", 1, "self.d")
    assert source.reads_size("d = q.shape[-1]\n", 1) and source.reads_size("B, T, C = x.size()\n", 1)
    assert not source.reads_size("t = float(self.d)\n", 1) and not source.reads_size("hs = C // n\n", 1)


def scores_pair(seed: int = 5):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(2, 5, 5, generator=g, dtype=torch.float64)
    return s, s.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf"))


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


def scaled(line: int, factor: float, src: str = CLASS) -> loc.Alignment:
    s, _ = scores_pair()
    stages = [stage("scores", 30, s), stage("scaled_scores", 31, s / 2)]
    return loc.Alignment([loc.Traced("matmul", line, s), loc.Traced("mul", line, s / 2 * factor)], stages, source=src)


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


def test_a_large_negative_fill_blocks_as_minus_infinity_does():
    _, masked = scores_pair()
    assert loc.matches(masked.masked_fill(torch.isneginf(masked), -1e9), stage("masked_scores", 31, masked))
    assert not loc.matches(masked.masked_fill(torch.isneginf(masked), 0.0), stage("masked_scores", 31, masked))


def test_an_abstention_is_told_from_nothing_to_locate():
    """decide() returns ABSTAIN, so that the training-mode pass does not name a line the evaluation pass refused."""
    from grader.diagnosis.localize.align import decide

    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("masked_scores", 31, masked)]
    src = "def f(s, m):\n    b = m\n    b = b | m\n    return s.masked_fill(b, -1e9)\n"
    assert decide([loc.Traced("div", 1, s)], stages, {"type": "RuntimeError", "line": 4}, source=src) is rules.ABSTAIN
    assert decide([loc.Traced("div", 1, s), loc.Traced("masked_fill", 4, masked)], stages, source=src) is None


def test_keys_computed_twice_where_the_values_belong():
    g = torch.Generator().manual_seed(11)
    q, k, v = (torch.randn(2, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    stages = [stage("queries", 10, q), stage("keys", 11, k), stage("values", 12, v)]
    entries = [loc.Traced("linear", 20, q), loc.Traced("linear", 21, k), loc.Traced("linear", 22, k),
               loc.Traced("transpose", 23, k.transpose(-2, -1))]
    found = rules.computed_twice(loc.Alignment(entries, stages))
    assert found is not None and found.line == 22 and found.stage == "values", found
    assert rules.computed_twice(loc.Alignment([entries[0], entries[1], entries[3]], stages)) is None  # a transpose: not again


def test_a_layout_built_over_several_lines_is_not_located():
    g = torch.Generator().manual_seed(12)
    ctx = torch.randn(2, 3, 5, 4, generator=g, dtype=torch.float64)
    merged = ctx.transpose(1, 2).reshape(2, 5, 12)
    stages = [stage("context", 10, ctx), stage("merged", 11, merged)]
    src = "def f(y):\n    y = y @ y\n    t = y.transpose(-1, -2)\n    m = t.reshape(2, 5, 12)\n    return m\n"
    entries = [loc.Traced("matmul", 2, ctx), loc.Traced("transpose", 3, ctx.transpose(-1, -2)),
               loc.Traced("reshape", 4, ctx.transpose(-1, -2).reshape(2, 5, 12))]
    assert rules.moved_before(loc.Alignment(entries, stages, source=src), entries[2])
    found = rules.scrambled_layout(loc.Alignment(entries, stages, source=src))
    assert isinstance(found, rules.Abstain) and found.cause == "heads_merge_wrong"  # no line, still the mistake's name
    assert loc.align(entries, stages, source=src) is None
    one = "def f(y):\n    y = y @ y\n    m = y.transpose(-1, -2).reshape(2, 5, 12)\n    return m\n"
    entries = [entries[0], loc.Traced("transpose", 3, ctx.transpose(-1, -2)), loc.Traced("reshape", 3, entries[2].tensor)]
    assert rules.scrambled_layout(loc.Alignment(entries, stages, source=one)).line == 3  # one line: that line


def test_a_layout_moved_over_reassigned_names_or_by_an_index_made_elsewhere_is_not_located():
    g = torch.Generator().manual_seed(13)
    ctx = torch.randn(2, 3, 5, 4, generator=g, dtype=torch.float64)
    stages = [stage("context", 10, ctx), stage("merged", 11, ctx.transpose(1, 2).reshape(2, 5, 12))]
    src = "def f(y, n):\n    y = y @ y\n    y = y.transpose(-1, -2)\n    y = y.reshape(2, 5, 12)\n    return y\n"
    assert source.assigned_before(src, 4) == {"y": 3}
    entries = [loc.Traced("matmul", 2, ctx), loc.Traced("transpose", 3, ctx.transpose(-1, -2)),
               loc.Traced("reshape", 4, ctx.transpose(-1, -2).reshape(2, 5, 12))]
    assert isinstance(rules.scrambled_layout(loc.Alignment(entries, stages, source=src)), rules.Abstain)
    repeat = [entries[0], entries[1], loc.Traced("repeat", 4, entries[2].tensor)]  # a repeat picks by its arguments
    assert not rules.moved_before(loc.Alignment(repeat, stages, source=src), repeat[2])
    index = "def f(y, n):\n    y = y @ y\n    i = torch.arange(n) % 2\n    z = y.index_select(1, i)\n    return z\n"
    entries = [loc.Traced("matmul", 2, ctx), loc.Traced("index_select", 4, ctx.flip(1))]
    stages = [stage("context", 10, ctx), stage("merged", 11, ctx * 2)]
    assert rules.scrambled_layout(loc.Alignment(entries, stages, source=index)) is rules.ABSTAIN


def test_roles_are_swapped_only_when_the_scores_combine_other_roles():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(3, 2, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    stages = [stage("queries", 5, q), stage("keys", 6, k), stage("values", 7, v), stage("scores", 8, q @ k.transpose(-2, -1))]
    entries = [loc.Traced("linear", 20, x) for x in (q, k, v)]
    al = loc.Alignment(entries + [loc.Traced("matmul", 24, k @ v.transpose(-2, -1))], stages)
    assert rules.other_roles(al.entries[-1].tensor, al) and rules.swapped_roles(al, 24).line == 20
    other = torch.randn(3, 2, 5, 5, generator=g, dtype=torch.float64)  # a layout gone wrong inside a helper
    al = loc.Alignment(entries + [loc.Traced("matmul", 24, other)], stages)
    assert not rules.other_roles(other, al) and rules.swapped_roles(al, 24) is None


def test_a_missing_dropout_is_located_where_the_weights_are_made():
    g = torch.Generator().manual_seed(14)
    s, v = torch.randn(2, 5, 5, generator=g, dtype=torch.float64), torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    w = torch.softmax(s, -1)
    dropped = torch.where(torch.rand(2, 5, 5, generator=g) < 0.5, 0.0, 2 * w).double()
    stages = [stage("weights", 30, w), stage("dropped_weights", 31, dropped), stage("context", 32, dropped @ v)]
    entries = [loc.Traced("softmax", 7, w), loc.Traced("matmul", 9, w @ v)]
    found = rules.training_pass(loc.Alignment(entries, stages, train=True))
    assert found is not None and found.line == 7 and "used without it at line 9" in found.evidence, found


def test_an_abstention_that_names_the_mistake_names_it_without_a_line(monkeypatch):
    """Heads laid out wrongly over two lines: no line, but the diagnosis is still heads_merge_wrong."""
    from grader import results
    from grader.catalog import load_catalog
    from grader.diagnosis.diagnoses import make
    from grader.diagnosis.localize import run
    from grader.results import Status, Verdict

    monkeypatch.setattr(run, "locate", lambda ex, harness, src: rules.Abstain("heads_merge_wrong", "laid out otherwise"))
    verdict = Verdict(4, "x", "t", [results.TestResult("t", "numerics", Status.FAILED, "x")], [make("wrong_output")],
                      "cpu", 0.0)
    run.localize_verdict(verdict, load_catalog().get(4), object(), "x = 1\n")
    assert verdict.localization is None and verdict.diagnoses[0].id == "heads_merge_wrong"
