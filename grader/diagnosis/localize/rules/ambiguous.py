"""Rules that abstain: the first difference may come from another line than the one it shows on."""
from __future__ import annotations

import torch

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.explain import SAME_POSITIONS
from grader.diagnosis.localize.source import built_elsewhere, reads_size, masking_lines
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.kinds import MOVES, PATTERN, PRODUCTS
from grader.diagnosis.localize.rules.reads import untraced_reads
from grader.diagnosis.localize.rules.tensors import frequencies_only


def untraced_angles(al: Alignment):
    """Angles that come from untraced constants (arange, base ** ...): no line can be trusted."""
    if al.failing.name == "angles" and (not al.same_size or frequencies_only(al.pick[1].tensor, al.failing)):
        return ABSTAIN
    return None


def out_of_order(al: Alignment):
    """A matrix product that matches no stage comes before the last stage the submission reproduces (attention
    computed before the cache it should read is grown): the submission works in another order than the reference,
    so the first entry after that match is not where they part: no line."""
    if any(e.op in PRODUCTS for i, e in al.odd if i < al.start):
        return ABSTAIN
    return None


def several_masks(al: Alignment):
    """The picked entry blocks other positions than the failing stage, and several masking calls ran on the scores
    (a padding mask and a causal one, applied one after the other, before the softmax): the first of them never
    equals the stage, whichever is wrong: no line."""
    how = al.how[0] if al.same_size else None
    if how is None or not how.startswith(PATTERN):
        return None
    after = al.entries[al.start + 1:]
    end = next((k for k, e in enumerate(after) if "softmax" in e.op), len(after))
    ran = {e.line for e in after[:end]} & masking_lines(al.source)  # on the scores: before the softmax
    return ABSTAIN if len(ran) > 1 else None


def unexplained_elsewhere(al: Alignment):
    """The picked entry differs in no way explain() names, and it only moves, picks or casts values (a split, a
    slice, a cat) that another line made, or it reads a value the trace does not follow (a scale, a setting made on
    another line; not a size read from a shape),
    or only its size is the failing stage's (another last dimension), or float32 steps precede it (rounding): the
    difference may come from elsewhere as well as from the line: no line."""
    if not al.how[0].startswith("it differs") or al.pick is None:
        return None
    e = al.pick[1]
    traced = {x.line for x in al.entries}
    moved = e.op in MOVES and any(a in traced for a in built_elsewhere(al.source, e.line, bases=True).values())
    sizes = {n: a for n, a in untraced_reads(al, e.line).items() if not reads_size(al.source, a)}
    if moved or sizes or e.tensor.shape[-1] != al.failing.tensor.shape[-1]:
        return ABSTAIN  # (last: only the size is the failing stage's, by chance: another quantity)
    if any(x.tensor.dtype == torch.float32 for x in al.entries[:al.pick[0] + 1]):
        return ABSTAIN  # float32 steps in a float64 trace: the difference may be rounding alone
    return None


def fill_then_more(al: Alignment):
    """The picked entry blocks the reference's positions with another fill value (-inf where the reference fills the
    dtype's lowest number). The fill is the line only when it is -inf (a row with no key: NaN) and the softmax goes
    straight into the product with the values. A step between (weights * alive, a masked_fill after the softmax) or
    after the output (a torch.where on it) may be the one meant for the rows with no key, and a finite fill (BERT's
    scores - 10000) leaves those rows a softmax to zero, not a fill to change: no line."""
    if al.pick is None or SAME_POSITIONS not in al.how[0]:
        return None
    e, after = al.pick[1], al.entries[al.pick[0] + 1:]
    if bool(torch.isneginf(e.tensor).any()) and len(after) == 2 and "softmax" in after[0].op and after[1].op in PRODUCTS:
        return None
    return ABSTAIN
