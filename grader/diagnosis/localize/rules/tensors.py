"""Questions about tensors alone, each answered without the source."""
from __future__ import annotations

import torch

from grader.diagnosis.layout import affine, close, rtol_for
from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import shaped_as
from grader.diagnosis.localize.model import Stage, Traced
from grader.diagnosis.localize.rules.kinds import PRODUCTS


def dropped_from(c: torch.Tensor, x: torch.Tensor) -> bool:
    """c looks like dropout (p = 0.5) of x: zeros, and twice x elsewhere, up to layout."""
    for y in shaped_as(c, x):
        kept = y != 0
        if 0 < int(kept.sum()) < y.numel() and close(y[kept], 2 * x[kept], rtol_for(y, x) * 10):
            return True
    return False


def half_precision(entries: list[Traced], before: int) -> Traced | None:
    """The first entry before index `before` computed in float16/bfloat16 in a float64 trace: where precision is lost."""
    return next((e for e in entries[:before] if e.tensor.dtype in (torch.float16, torch.bfloat16)), None)


def frequencies_only(c: torch.Tensor, angles: Stage) -> bool:
    """Angles whose positions column is right (frequency 0 is base**0 = 1) while others differ: the frequencies are
    wrong, and they are computed from constants (torch.arange), which the trace does not follow."""
    x = angles.tensor.double()
    if c.shape != x.shape or x.dim() != 2 or x.shape[-1] < 2:
        return False
    return close(c[:, 0].double(), x[:, 0], rtol_for(c, x) * 10)


def scaled_reference(e: Traced, reference: list[Traced]) -> str | None:
    """How e is a tensor the reference computes times a constant (a scale applied with another value), or None."""
    for r in reference:
        if r.tensor.shape == e.tensor.shape and (k := affine(e.tensor.double(), r.tensor.double(), rtol_for(e.tensor) * 10)):
            if k[0] == "ratio":
                return f"it equals the reference's tensor of line {r.line} times {k[1]:.4g}"
    return None


def products(entries: list[Traced]) -> int:
    """How many matrix products a trace holds (a block loop's iterations show in them)."""
    return sum(e.op in PRODUCTS for e in entries)


def line_result(entries: list[Traced], i: int) -> bool:
    """Entry i is the value its line computes (the last op of one run of that line), not a step inside it: a line
    may compute `q @ k.T / sqrt(d)` in another order than the reference and still give the same value."""
    return i + 1 == len(entries) or entries[i + 1].line != entries[i].line


def other_roles(c: torch.Tensor, al: Alignment) -> bool:
    """c is the product of two of the reference's queries, keys and values other than queries times keys."""
    by = {s.name: s.tensor.double() for s in al.stages if s.name in ("queries", "keys", "values")}
    if len(by) != 3:
        return False
    pairs = [(a, b) for a in by for b in by if a != b and (a, b) != ("queries", "keys")]
    for a, b in pairs:
        x, y = by[a], by[b]
        if x.shape[-1] != y.shape[-1]:
            continue
        t = x @ y.transpose(-2, -1)
        if t.numel() == c.numel() and any(close(z.double(), t, rtol_for(c) * 10) or (k := affine(z.double(), t, rtol_for(c) * 10))
                                          and k[0] == "ratio" for z in shaped_as(c, t)):
            return True
    return False
