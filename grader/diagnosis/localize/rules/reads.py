"""Questions about the alignment and the source together: what a line reads, and where that was made."""
from __future__ import annotations

import torch

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import PARALLEL, matches
from grader.diagnosis.localize.model import Stage, Traced
from grader.diagnosis.localize.source import (attribute_built_at, attributes_read_at, built_elsewhere, calls_self,
                                              assigned_before)
from grader.diagnosis.localize.rules.kinds import MOVES, REARRANGE


def untraced_reads(al: Alignment, line: int) -> dict[str, int]:
    """{name: line} for the values the statement on `line` reads that are made on another line the trace does not
    follow (no tensor recorded there): a local name assigned once, or self.<name> computed in the class."""
    traced = {e.line for e in al.entries}
    found = {n: a for n, a in built_elsewhere(al.source, line).items() if a not in traced and not calls_self(al.source, a)}
    for name in attributes_read_at(al.source, line):
        if (a := attribute_built_at(al.source, line, name)) is not None and a not in traced:
            found[f"self.{name}"] = a
    return found


def shaped_elsewhere(al: Alignment, line: int) -> tuple[int, Traced] | None:
    """A tensor the statement on `line` reads, made on one other line by a rearrangement (transpose, view, ...) into
    a shape that no tensor of the reference has: when `line` raises, that shape is the likely cause."""
    shapes = {tuple(r.tensor.shape) for r in al.reference} | {tuple(s.tensor.shape) for s in al.stages}
    for name, a in built_elsewhere(al.source, line, bases=True).items():
        made = [e for e in al.entries if e.line == a]
        if made and made[-1].op in MOVES and tuple(made[-1].tensor.shape) not in shapes:
            return a, made[-1]
    return None


def cast_elsewhere(al: Alignment, line: int) -> tuple[int, Traced] | None:
    """The one tensor the statement on `line` reads that another line made in another dtype than the rest of what it
    reads (`attn = sim.softmax(-1, dtype=torch.float32)`, then `einsum(..., attn, v)` with v in float64): when
    `line` raises, that dtype is the likely cause."""
    made = {}
    for name, a in built_elsewhere(al.source, line, bases=True).items():
        if (on := [e for e in al.entries if e.line == a]):
            made[name] = (a, on[-1])
    odd = [(a, e) for a, e in made.values() if e.tensor.dtype != torch.float64]  # the trace runs in float64
    return odd[0] if len(odd) == 1 else None


def moved_before(al: Alignment, e: Traced) -> bool:
    """The entry only rearranges values, and its line reads a tensor that another line made by rearranging values
    too (`y = y.transpose(-1, -2)`, then `y = y.view(B, T, C)`): a layout built over several lines. A repeat, a
    cat or an index picks by its own arguments: not a rearrangement. A tensor unbound or stacked along a dim on the
    line before (`pieces = torch.unbind(y, dim=2)`, then `torch.cat(pieces, -1).reshape(...)`) was rearranged there
    too."""
    if e.op not in REARRANGE:
        return False
    for a in assigned_before(al.source, e.line).values():
        made = [x for x in al.entries if x.line == a]
        if made and made[-1].op in REARRANGE | PIECES:
            return True
    return False


PIECES = {"unbind", "stack"}  # a dim taken apart or put together: a rearrangement written over several lines


def rearranged_input(al: Alignment, before: int) -> tuple[int, Traced, Stage] | None:
    """The last queries/keys/values the submission computed before an entry, when laid out unlike the reference's."""
    found = []
    for s in al.earlier:
        if s.name not in PARALLEL:
            continue
        last = [i for i, e in enumerate(al.entries[:before]) if matches(e.tensor, s)]
        got = al.entries[last[-1]].tensor.shape if last else None
        if got is not None and got != s.tensor.shape and got[-1] == s.tensor.shape[-1]:  # not a transpose for a matmul
            found.append((last[-1], al.entries[last[-1]], s))
    return min(found, key=lambda f: f[0]) if found else None
