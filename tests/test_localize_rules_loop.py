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


LOOPS = """import torch
def attend(query, key, block):
    S = key.shape[-2]
    n = S // block
    rows = []
    for i0 in range(0, query.shape[-2], block):
        q = query[..., i0:i0 + block, :]
        for j0 in range(0, S - block + 1, block):
            k = key[..., j0:j0 + block, :]
        for jb in range(n):
            k = key[..., jb * block:(jb + 1) * block, :]
        for j in starts(S, block):
            k = key[..., j:j + block, :]
        for j0 in range(0, S, block):
            k = key[..., j0:j0 + block, :]
    return rows
def starts(n, size):
    return range(0, n - size + 1, size)
def stopped(query, key, block, S):
    for i0 in range(0, query.shape[-2], block):
        q = query[..., i0:i0 + block, :]
        for j0 in range(0, S - block + 1, block):
            if j0 > i0:
                break
            k = key[..., j0:j0 + block, :]
        for j0 in range(0, S - block + 1, block):
            if j0 <= i0:
                k = key[..., j0:j0 + block, :]
        for j0 in range(0, S - block + 1, block):
            if j0 + block > S:
                break
            k = key[..., j0:j0 + block, :]
"""


def blocks_case(key_line: int, keys: int = 2, queries: int = 2, query_line: int = 7):
    """A query and a key loop over blocks of 2: the reference takes 2 query blocks and 3 key blocks (the last short);
    the submission takes the first `queries` and `keys` of them."""
    g = torch.Generator().manual_seed(5)
    query, key = torch.randn(4, 3, generator=g, dtype=torch.float64), torch.randn(5, 3, generator=g, dtype=torch.float64)
    qb, kb = [query[i:i + 2] for i in (0, 2)], [key[j:j + 2] for j in (0, 2, 4)]
    reference = [loc.Traced("__getitem__", 50, t) for t in qb] + [loc.Traced("__getitem__", 51, t) for t in kb]
    entries = [loc.Traced("__getitem__", query_line, t) for t in qb[:queries]]
    entries += [loc.Traced("__getitem__", key_line, t) for t in kb[:keys]]
    return loc.Alignment(entries, [stage("output", 60, torch.ones(4, 3))], reference=reference, source=LOOPS)


def test_a_loop_that_never_takes_the_reference_s_last_block_is_located_at_its_count():
    assert rules.loop_cut_short(blocks_case(9)).line == 8  # range(0, S - block + 1, block) on the loop's header
    assert rules.loop_cut_short(blocks_case(11)).line == 4  # range(n), n = S // block made once
    assert rules.loop_cut_short(blocks_case(13)).line == 18  # a helper's one return range(...)
    assert rules.first_divergence(blocks_case(9)).line == 8
    # the outer loop stops short too (its inner loop then misses blocks as well): the outer loop's count
    assert rules.loop_cut_short(blocks_case(9, queries=1)).line == 6


def test_every_block_taken_or_a_count_read_as_it_is_gives_no_loop_line():
    assert rules.loop_cut_short(blocks_case(9, keys=3)) is None  # every block the reference takes
    assert rules.loop_cut_short(blocks_case(15)) is None  # range(0, S, block): S is the size as it is, not the count
    assert rules.loop_cut_short(blocks_case(9, query_line=99)) is None  # the loop around it is not seen taking its blocks
    al = blocks_case(9)
    al.raised = {"type": "RuntimeError", "line": 9}
    assert rules.loop_cut_short(al) is None  # a raise ended the loops
    assert rules.loop_cut_short(blocks_case(32, query_line=21)) is None  # the loop breaks: the break, not the count
    # a break where the block reaches past the queries' block (a triangle, as causal tiles cut) leaves the count
    assert rules.loop_cut_short(blocks_case(25, query_line=21)).line == 22
    shuffled = blocks_case(9)
    shuffled.entries[2:4] = shuffled.entries[3:1:-1]
    assert rules.loop_cut_short(shuffled) is None  # not the reference's order: blocks skipped here and there
    assert rules.loop_cut_short(blocks_case(28, query_line=21)) is None  # a condition guards the block
