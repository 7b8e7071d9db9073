"""The last rules: the first entry that differs, by its shape or by how it differs."""
from __future__ import annotations

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import PARALLEL
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.kinds import PRODUCTS
from grader.diagnosis.localize.text import label


def other_shape(al: Alignment):
    """The first entry that differs has another size than the failing stage: that line, by its shape. When that entry
    is a matrix product while the failing stage is one computed side by side (keys, values, the grown cache), the
    stage was never made (a cache not appended, in a branch that did not run): where that step belongs, no line."""
    if al.same_size:
        return None
    e = al.pick[1]
    if e.op in PRODUCTS and al.failing.name in PARALLEL:
        return ABSTAIN  # keys (or cached keys) never made, and a product of other sizes: the step was skipped before
    return al.at(e.line, al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the first that differs: it has "
                                     f"shape {tuple(e.tensor.shape)} (the reference's {label(al.failing.name)}: "
                                     f"{tuple(al.failing.tensor.shape)})")


def first_difference(al: Alignment):
    """The picked entry's line, with how it differs."""
    how, _, cause = al.how
    e = al.pick[1]
    return al.at(e.line, al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the first that differs: {how}",
                 cause=cause)
