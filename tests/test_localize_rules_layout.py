"""grader/diagnosis/localize/rules/layout.py: values laid out or assigned otherwise. Each rule on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules, source
from tests.localize_helpers import stage


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


def test_a_layout_picked_by_an_index_made_from_constants_is_not_located():
    g = torch.Generator().manual_seed(21)
    k = torch.randn(2, 2, 5, 4, generator=g, dtype=torch.float64)
    want = k[:, torch.tensor([0, 0, 1, 1])]
    stages = [stage("keys", 10, k), stage("repeated_keys", 11, want)]
    src = "def f(k, h, g):\n    k = k @ k\n    i = torch.arange(h) % g\n    r = k[:, i]\n    return r\n"
    assert source.index_built_at(src, 4) == {"i": 3} and source.index_built_at("def g(x, a, b):\n    return x[:, a:b]\n", 2) == {}
    entries = [loc.Traced("matmul", 2, k), loc.Traced("__getitem__", 4, k[:, torch.tensor([0, 1, 0, 1])])]
    assert rules.scrambled_layout(loc.Alignment(entries, stages, source=src)) is rules.ABSTAIN


def test_heads_merged_otherwise_on_one_line_or_abstain_over_several():
    g = torch.Generator().manual_seed(12)
    ctx = torch.randn(2, 3, 5, 4, generator=g, dtype=torch.float64)  # (B, heads, T, head_dim)
    merged = ctx.transpose(1, 2).reshape(2, 5, 12)
    w = torch.randn(12, 12, generator=g, dtype=torch.float64)
    stages = [stage("context", 10, ctx), stage("merged", 11, merged), stage("output", 12, merged @ w)]
    wrong = ctx.permute(0, 2, 3, 1)
    one = ("def f(self, a, v, B, T, C):\n    y = a @ v\n    y = y.permute(0, 2, 3, 1).reshape(B, T, C)\n"
           "    return self.proj(y)\n")
    entries = [loc.Traced("matmul", 2, ctx), loc.Traced("permute", 3, wrong), loc.Traced("reshape", 3, wrong.reshape(2, 5, 12)),
               loc.Traced("linear", 4, wrong.reshape(2, 5, 12) @ w)]
    al = loc.Alignment(entries, stages, source=one)
    assert al.failing.name == "merged" and al.failing.strict
    found = rules.merged_otherwise(al)
    assert found.line == 3 and found.cause == "heads_merge_wrong", found
    two = ("def f(self, a, v, B, T, C):\n    y = a @ v\n    y = y.permute(0, 2, 3, 1)\n    y = y.reshape(B, T, C)\n"
           "    return self.proj(y)\n")
    entries = [loc.Traced("matmul", 2, ctx), loc.Traced("permute", 3, wrong), loc.Traced("reshape", 4, wrong.reshape(2, 5, 12)),
               loc.Traced("linear", 5, wrong.reshape(2, 5, 12) @ w)]
    assert rules.merged_otherwise(loc.Alignment(entries, stages, source=two)) is rules.ABSTAIN
    right = [loc.Traced("matmul", 2, ctx), loc.Traced("reshape", 3, merged), loc.Traced("linear", 4, merged @ w * 2)]
    assert rules.merged_otherwise(loc.Alignment(right, stages, source=one)) is None  # merged right: not this rule's case


def test_a_merge_taken_apart_on_one_line_and_put_together_on_the_next_is_not_located():
    g = torch.Generator().manual_seed(21)
    ctx = torch.randn(2, 3, 5, 4, generator=g, dtype=torch.float64)
    stages = [stage("context", 10, ctx), stage("merged", 11, ctx.transpose(1, 2).reshape(2, 5, 12))]
    src = "def f(y):\n    y = y @ y\n    parts = torch.unbind(y, dim=2)\n    m = torch.cat(parts, -1).reshape(2, 5, 12)\n    return m\n"
    parts = torch.unbind(ctx, dim=2)
    wrong = torch.cat(parts, -1).reshape(2, 5, 12)
    entries = [loc.Traced("matmul", 2, ctx), *(loc.Traced("unbind", 3, p) for p in parts),
               loc.Traced("cat", 4, torch.cat(parts, -1)), loc.Traced("reshape", 4, wrong)]
    found = rules.scrambled_layout(loc.Alignment(entries, stages, source=src))
    assert isinstance(found, rules.Abstain) and found.cause == "heads_merge_wrong", found


def test_swapped_roles_are_located_where_the_scores_operands_get_their_names():
    g = torch.Generator().manual_seed(22)
    q, k, v = (torch.randn(3, 2, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    stages = [stage("queries", 5, q), stage("keys", 6, k), stage("values", 7, v), stage("scores", 8, q @ k.transpose(-2, -1))]
    src = ("def f(x, layer):\n    parts = layer(x).chunk(3, -1)\n    v, k, q = [p.view(3, 2, 5, 4) for p in parts]\n"
           "    return q @ k.transpose(-2, -1)\n")
    entries = [loc.Traced("chunk", 2, t) for t in (q, k, v)] + [loc.Traced("view", 3, t) for t in (v, k, q)]
    al = loc.Alignment(entries + [loc.Traced("matmul", 4, v @ k.transpose(-2, -1))], stages, source=src)
    assert rules.swapped_roles(al, 4).line == 3  # the unpacking order, not the chunk
    split = ("def f(x, layer):\n    q, k, v = layer(x).chunk(3, -1)\n    k = k.view(3, 2, 5, 4)\n"
             "    return v @ k.transpose(-2, -1)\n")
    al = loc.Alignment(entries[:3] + [loc.Traced("view", 3, k), loc.Traced("matmul", 4, v @ k.transpose(-2, -1))],
                       stages, source=split)
    assert rules.swapped_roles(al, 4).line == 2  # k renamed by its own view: bound where the chunk is unpacked
