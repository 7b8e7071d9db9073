"""The last rules: the first entry that differs, by its shape or by how it differs."""
from __future__ import annotations

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.text import label


def other_shape(al: Alignment):
    """The first entry that differs has another size than the failing stage: that line, by its shape."""
    if al.same_size:
        return None
    e = al.pick[1]
    return al.at(e.line, al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the first that differs: it has "
                                     f"shape {tuple(e.tensor.shape)} (the reference's {label(al.failing.name)}: "
                                     f"{tuple(al.failing.tensor.shape)})")


def first_difference(al: Alignment):
    """The picked entry's line, with how it differs."""
    how, _, cause = al.how
    e = al.pick[1]
    return al.at(e.line, al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the first that differs: {how}",
                 cause=cause)
