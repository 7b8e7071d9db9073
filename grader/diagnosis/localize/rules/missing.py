"""Rules for a step that is missing or whose result is never used."""
from __future__ import annotations

import torch

from grader.diagnosis.layout import close, rtol_for
from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import PARALLEL
from grader.diagnosis.localize.explain import MISSING_STEP
from grader.diagnosis.localize.source import discarded_at, masking_lines, return_after
from grader.diagnosis.localize.text import label
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.kinds import PRODUCTS


def nothing_after(al: Alignment):
    """Nothing differs after the last matched stage: the step is missing (the return after it, else that line)."""
    if al.pick is not None:
        return None
    through, failing = al.through, al.failing
    if through is None or any(s.name not in PARALLEL for s in al.later if al.match[s.name] is not None):
        return ABSTAIN
    line = al.entries[al.start].line
    ret = return_after(al.source, line)
    if ret is not None:
        return al.at(ret, failing, f"your code matches the reference through the {label(through.name)} (line {line}) "
                                   f"and returns at line {ret} without the {label(failing.name)} step")
    return al.at(line, failing, f"your code matches the reference through the {label(through.name)} (line {line}) "
                                f"and computes nothing from there: the {label(failing.name)} step is missing")


def unused_result(al: Alignment):
    """The picked entry derives from a stage before the last matched one: that match's result is never used."""
    base, through, earlier = al.how[1], al.through, al.earlier
    if base is None or through is None or base not in earlier or earlier.index(base) >= earlier.index(through) \
            or through.name in PARALLEL:
        return None
    line = al.entries[al.start].line
    e = al.pick[1]
    return al.at(line, al.failing, f"the result of line {line} ({label(through.name)}) is never used: the tensor at line "
                                   f"{e.line} ({e.op}) is the softmax of the {label(base.name)}")


def missing_step(al: Alignment):
    """The picked entry is the softmax of the last matched stage: the failing step (scaling, masking) is missing
    between them. A missing scale belongs on the line of that match or on the softmax line: reported only when they
    are one line (`softmax(q @ k.T)`), else no line. A masking call that runs after the softmax is the misplaced
    step: its line; so is one masking call whose result is thrown away (discarded_at). Any other missing mask: no line (it belongs on the scores line, the next or the softmax, a
    matter of taste; or a masking call in a branch that did not run)."""
    how, base, cause = al.how
    if al.failing.name not in MISSING_STEP or cause is None or base is None or al.through is None:
        return None
    line, e = al.entries[al.start].line, al.pick[1]
    if al.failing.name != "masked_scores" and line != e.line:
        return ABSTAIN  # a missing scale belongs on the scores line or on the softmax line: either is as right
    if al.failing.name == "masked_scores":
        masks = masking_lines(al.source)
        later = [x.line for x in al.entries[al.pick[0]:] if x.line in masks and x.line != e.line]
        if later:
            return al.at(later[0], al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the softmax of "
                                               f"the {label(base.name)}: the mask is applied at line {later[0]}, after "
                                               f"it, instead of to the scores before it", cause=cause)
        if len(dropped := discarded_at(al.source, "mask")) == 1:
            return al.at(dropped[0], al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the softmax of "
                                                 f"the {label(base.name)}: the masking call at line {dropped[0]} makes "
                                                 f"a new tensor and its result is thrown away", cause=cause)
        return ABSTAIN  # where a missing mask belongs (this line, the next, the softmax) is a matter of taste
    return al.at(line, al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the softmax of the "
                                   f"{label(base.name)}: the {label(al.failing.name)} step is missing; it belongs on or "
                                   f"after line {line}", cause=cause)


def step_skipped(al: Alignment):
    """The failing stage changes some rows of the last matched one (the weights of a query with no key, zeroed), and
    the picked entry is the next stage's product, equal to the reference's in every other row: the step was skipped.
    It belongs after the last match's line or in front of the product's: reported only when they are one line
    (`softmax(s, -1) @ v`), else no line."""
    through, failing, e = al.through, al.failing, al.pick[1] if al.pick is not None else None
    nxt = next((s for s in al.later if s.tensor.shape == (e.tensor.shape if e is not None else None)), None)
    if e is None or e.op not in PRODUCTS or through is None or nxt is None or al.match[nxt.name] is not None \
            or through.tensor.shape != failing.tensor.shape or through.tensor.dim() < 2:
        return None
    rows = ~torch.isclose(through.tensor, failing.tensor, equal_nan=True).all(-1)
    if nxt.tensor.shape[:-1] != rows.shape or not rows.any() or rows.all():
        return None
    got, want = e.tensor.double(), nxt.tensor.double()
    if not close(got[~rows], want[~rows], rtol_for(got, want)) or close(got[rows], want[rows], rtol_for(got, want)):
        return None
    if al.entries[al.start].line != e.line:
        return ABSTAIN  # after the line of the last match or in front of the product's: either is as right
    return al.at(e.line, failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) equals the reference's "
                                  f"{label(nxt.name)} except in {int(rows.sum())} row(s), where the {label(failing.name)} "
                                  f"differ from the {label(through.name)}: that step is missing before line {e.line}")
