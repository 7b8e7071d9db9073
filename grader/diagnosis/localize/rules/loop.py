"""The rule for a reference that marks only its output (its work happens in a loop or in helpers)."""
from __future__ import annotations

from grader.diagnosis.localize.alignment import Alignment, also_computed
from grader.diagnosis.localize.source import in_called_function
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.kinds import MOVES
from grader.diagnosis.localize.rules.tensors import line_result, products, scaled_reference
from grader.diagnosis.localize.rules.values import built_before


def first_divergence(al: Alignment):
    """A reference that marks only its output (its work happens in a loop or in helpers): every tensor it computes is
    a step to line up with, so the first tensor the reference never computes is where the submission parts from it."""
    if len(al.stages) != 1:
        return None
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
