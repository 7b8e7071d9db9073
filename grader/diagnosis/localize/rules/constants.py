"""Rules for a mask or a table the code builds itself (consts: no floating data), compared with the reference's."""
from __future__ import annotations

import torch

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import blocked
from grader.diagnosis.localize.constants import matched, roots
from grader.diagnosis.localize.rules.kinds import PATTERN
from grader.diagnosis.localize.text import label


def _root_line(al: Alignment, uses, want: str | None = None) -> int | None:
    """The one line where the wrong consts among `uses` begin, or None (none wrong, unknown, or several lines)."""
    refs = [r.tensor for r in al.reference_consts]
    found = roots(al.consts, list(uses), refs, want)
    lines = {c.line for _, c in found} if found else set()
    return lines.pop() if len(lines) == 1 else None


def _blocks(mask: torch.Tensor, scores: torch.Tensor) -> bool:
    """The scores block exactly the positions the mask holds, where it is broadcast to them."""
    try:
        return torch.equal(mask.expand(scores.shape), blocked(scores))
    except RuntimeError:
        return False


def _applied(mask: torch.Tensor, scores: torch.Tensor) -> bool:
    """The scores block exactly the positions the mask (or its negation) holds."""
    return _blocks(mask, scores) or _blocks(~mask, scores)


def wrong_mask(al: Alignment):
    """The picked entry blocks other positions than the failing stage, it blocks exactly those of a bool mask the code
    built, and that mask is none of the reference's masks (nor their negation) where applied: the line where it first
    goes wrong, when its right parts lead to one line (`blocked | pad[:, None, :, None]`, `causal & pad`)."""
    if al.pick is None or not al.same_size or not al.consts or not al.how[0].startswith(PATTERN):
        return None
    e = al.pick[1]
    masks = [u for u in e.uses if 0 <= u < len(al.consts) and al.consts[u] is not None
             and al.consts[u].tensor.dtype == torch.bool and _applied(al.consts[u].tensor, e.tensor)]
    if len(masks) != 1 or matched(al.consts[masks[0]].tensor, [r.tensor for r in al.reference_consts]) is not None:
        return None
    line = _root_line(al, masks, "same" if _blocks(al.consts[masks[0]].tensor, e.tensor) else "negated")
    if line is None:
        return None
    return al.at(line, al.failing, f"{al.prefix()}the mask applied at line {e.line} is not the reference's: it first "
                                   f"differs at line {line}, and {al.how[0].removeprefix('it ')}")


def wrong_table(al: Alignment):
    """The failing stage is computed from positions alone (the angles), and the first entry after the last match that
    reads a table the code built (from torch.arange, a base ** ...) that is none of the reference's (up to layout,
    sign, dtype, duplicated halves), up to the first computed from the data that reads one: the line where the tables first go
    wrong, when it is one."""
    if al.failing.data or not al.consts:
        return None
    refs, verdicts = [r.tensor for r in al.reference_consts], {}

    def wrong(u):
        if u not in verdicts:
            verdicts[u] = matched(al.consts[u].tensor, refs) is None
        return verdicts[u]

    for e in (e for e in al.entries[al.start + 1:] if e.uses):
        tables = [u for u in e.uses if 0 <= u < len(al.consts) and al.consts[u] is not None
                  and al.consts[u].tensor.dtype != torch.bool]
        if len(tables) != len(e.uses):
            return None
        if any(wrong(u) for u in tables):
            line = _root_line(al, tables)
            if line is None:
                return None
            return al.at(line, al.failing, f"the table built at line {line} is none of the reference's, and from there "
                                           f"the {label(al.failing.name)} differ (the tensor at line {e.line} reads it)")
        if e.data:
            return None
    return None
