"""The rule for a reference that marks only its output (its work happens in a loop or in helpers)."""
from __future__ import annotations

import ast

from grader.diagnosis.localize.alignment import Alignment, also_computed
from grader.diagnosis.localize.compare import close
from grader.diagnosis.localize.source import count_made_at, in_called_function, loops_at, parse, skips_blocks
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.kinds import MOVES
from grader.diagnosis.localize.rules.tensors import line_result, products, scaled_reference
from grader.diagnosis.localize.rules.values import built_before


def first_divergence(al: Alignment):
    """A reference that marks only its output (its work happens in a loop or in helpers): every tensor it computes is
    a step to line up with, so the first tensor the reference never computes is where the submission parts from it."""
    if len(al.stages) != 1:
        return None
    if (found := loop_cut_short(al)) is not None:
        return found
    if products(al.entries) < products(al.reference):
        return ABSTAIN  # fewer matrix products than the reference: a loop skipped work, no line computes a wrong value
    ends = [(i, e) for i, e in al.rest if line_result(al.entries, i)]
    if not ends:
        return None
    e = ends[0][1]
    if products(al.entries) > products(al.reference) and any(x.line == e.line and also_computed(x, al.reference)
                                                             for x in al.entries):
        return ABSTAIN  # more products than the reference, on a line that is right elsewhere: extra work, maybe
    if in_called_function(al.source, e.line):
        return ABSTAIN  # in a helper, on what a caller passed: the helper or the call (or the state it is given)
    if e.op in MOVES:
        return ABSTAIN  # a slice, cast or rearrangement differs: what it was taken from, or how, is not known
    if tuple(e.tensor.shape) not in {tuple(r.tensor.shape) for r in al.reference} | {tuple(s.tensor.shape) for s in al.stages}:
        return ABSTAIN  # no tensor of the reference has its shape: the work is cut otherwise (other blocks), not comparable
    if (found := built_before(al, e.line, scaled_reference(e, al.reference))) is not None:
        return found
    return al.at(e.line, al.failing, f"the tensor at line {e.line} ({e.op}) is the first that differs: the reference "
                                     f"computes no tensor equal to it (shape {tuple(e.tensor.shape)})")


SLICES = {"__getitem__", "narrow", "split", "chunk", "tensor_split", "unbind", "select", "index_select"}


def slice_lines(al: Alignment) -> tuple[dict[int, bool], bool]:
    """({line: complete}, in order) for the submission's lines taking blocks (slices) of a tensor, each block equal to
    one tensor the reference computes on one of its lines by one op: complete when they are all of that line's (False:
    the loop around them stopped before the reference's did). in order: the submission takes those blocks in the
    reference's order, leaving out only the ones it never takes (a loop that skips a block now and then does not)."""
    def same(a, b):
        return a.shape == b.shape and close(a, b, 1e-12)
    groups = {}
    for r in al.reference:
        groups.setdefault((r.line, r.op), []).append(r)
    mine = {}
    for e in al.entries:
        if e.op in SLICES:
            mine.setdefault(e.line, []).append(e)
    out, taken_ids, sequence = {}, set(), []
    for line, taken in mine.items():
        for key, blocks in groups.items():
            ids = [next((id(b) for b in blocks if same(t.tensor, b.tensor)), None) for t in taken]
            if None not in ids:
                out[line] = set(ids) == {id(b) for b in blocks}
                taken_ids.update(ids)
                sequence += [(id(t), i) for t, i in zip(taken, ids)]
                break
    order = {id(e): k for k, e in enumerate(al.entries)}
    mine_seq = [i for _, i in sorted(sequence, key=lambda p: order[p[0]])]
    used = {key for key, blocks in groups.items() if any(id(b) in taken_ids for b in blocks)}
    first = {}  # a block taken again (the same keys for each block of queries) is the first one equal to it
    for key in used:
        for b in groups[key]:
            first[id(b)] = next(id(c) for c in groups[key] if same(c.tensor, b.tensor))
    ref_seq = [first[id(r)] for r in al.reference if (r.line, r.op) in used]
    return out, mine_seq == [i for i in ref_seq if i in taken_ids]


def loop_cut_short(al: Alignment):
    """Blocks the reference takes that the submission never takes, although every block it takes is one of the
    reference's: the loop taking them ran fewer times. Its bound is the line (the range's header, or the one statement
    computing the count it reads); when loops nested in one another all stop short, the outermost explains the others.
    None when the loops are not nested, the loop breaks or a condition guards the block, the forward raised, or
    several names make the bound."""
    tree = parse(al.source)
    if tree is None or al.raised is not None:
        return None  # a raise ends every loop early
    found, in_order = slice_lines(al)
    lines = [n for n, complete in found.items() if not complete]
    if not lines or not in_order or any(in_called_function(al.source, n) for n in found):
        return None
    loops = [loops_at(tree, n) for n in lines]
    if any(not nest for nest in loops):
        return None
    outer = min((nest[-1] for nest in loops), key=lambda n: n.lineno)
    if any(outer not in nest for nest in loops) or not isinstance(outer, ast.For):
        return None
    if any(skips_blocks(tree, outer, n) for n, nest in zip(lines, loops) if nest[-1] is outer):
        return None  # a break, a continue or a condition may leave the blocks out, not the count
    for around in loops_at(tree, outer.lineno):  # a loop around it must be seen to take all its blocks
        if around is not outer and not any(complete and loops_at(tree, n)[-1:] == [around] for n, complete in found.items()):
            return None
    line = count_made_at(al.source, outer)
    if line is None:
        return None
    return al.at(line, al.failing, f"the loop at line {outer.lineno} takes fewer blocks than the reference's: the "
                                   f"blocks it takes are the reference's, the last ones it never takes, so its count "
                                   f"(line {line}) stops short")
