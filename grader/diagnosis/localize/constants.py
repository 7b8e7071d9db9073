"""The submission's consts (bool masks, tables built from torch.arange or torch.ones) against the reference's.

A mask is right when it blocks what one of the reference's masks blocks where both are applied (broadcast from the
right, as masked_fill broadcasts it), or its negation does (a mask of allowed positions). A table is right when it
holds one of the reference's tensors up to a reshape and a permutation, its halves duplicated or its values
interleaved pairwise (emb = cat(freqs, freqs)), its sign or its dtype. A wrong const whose own consts are all right
is where a wrong one starts (a root).
"""
from __future__ import annotations

import math

import torch

from grader.diagnosis.layout import close, equivalent, rtol_for

MAX_BROADCAST = 1 << 16
MAX_WALK = 64


def _broadcast_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        shape = torch.broadcast_shapes(a.shape, b.shape)
    except RuntimeError:
        return False
    return math.prod(shape) <= MAX_BROADCAST and torch.equal(a.expand(shape), b.expand(shape))


def mask_match(m: torch.Tensor, refs: list[torch.Tensor]) -> str | None:
    """"same" or "negated" when mask m is one of the reference's masks (or its negation) where applied, "both" when
    it is either (all True, all False), else None."""
    masks = [r for r in refs if r.dtype == torch.bool]
    same, negated = any(_broadcast_equal(m, r) for r in masks), any(_broadcast_equal(~m, r) for r in masks)
    return "both" if same and negated else "same" if same else "negated" if negated else None


def _halves(t: torch.Tensor):
    """t itself, and the half it repeats when its last dim holds each value twice (duplicated halves, or pairs)."""
    yield t
    n = t.shape[-1] if t.dim() else 0
    if n >= 2 and n % 2 == 0:
        a, b = t[..., :n // 2], t[..., n // 2:]
        if torch.equal(a, b):
            yield a
        if torch.equal(t[..., 0::2], t[..., 1::2]):
            yield t[..., 0::2]


def _table_equal(t: torch.Tensor, r: torch.Tensor) -> bool:
    rtol = rtol_for(*(x for x in (t, r) if x.is_floating_point())) if (t.is_floating_point() or r.is_floating_point()) else 0.0
    a, b = t.double(), r.double()
    if a.numel() != b.numel():
        return False
    if a.squeeze().shape == b.squeeze().shape and close(a.squeeze(), b.squeeze(), rtol):
        return True
    return a.numel() <= 4096 and equivalent(a, b, rtol or 1e-12)


def table_match(t: torch.Tensor, refs: list[torch.Tensor]) -> str | None:
    """"same" or "negated" when table t holds one of the reference's non-bool tensors (up to layout), else None."""
    tables = [r for r in refs if r.dtype != torch.bool and not r.is_complex()]
    for h in _halves(t):
        if any(_table_equal(h, r) for r in tables):
            return "same"
        if any(_table_equal(-h.double(), r) for r in tables):
            return "negated"
    return None


def matched(t: torch.Tensor, refs: list[torch.Tensor]) -> str | None:
    """mask_match() or table_match(); a one-number table (torch.tensor(base)) is a value the reference keeps a Python
    number, never traced: taken as right ("both")."""
    if t.dtype != torch.bool and t.numel() == 1:
        return "both"
    return mask_match(t, refs) if t.dtype == torch.bool else table_match(t, refs)


INVERTS = {"__invert__", "logical_not", "bitwise_not"}
FLIP = {"same": "negated", "negated": "same"}


def roots(consts: list, start: list[int], refs: list[torch.Tensor], want: str | None = None):
    """The consts where the wrong ones among `start` begin: [(index, const)], or None when that cannot be told (a
    const dropped or not recorded, one computed from the data, a walk too long).

    want: for masks, the convention `start` is applied in ("same": True blocks); `~m` asks the other of m. A mask in
    the other convention than asked is where it goes wrong (`blocked | keep`), unless an inversion on another line
    than its reader made it so (`pad = ~kpm`, then `blocked | pad`: the inversion or the reader): unknown. For
    tables (want None) any match is right."""
    found, stack, steps = [], [(u, want, None) for u in start], 0
    verdicts: dict[int, str | None] = {}

    def verdict(i):
        if i not in verdicts:
            verdicts[i] = matched(consts[i].tensor, refs)
        return verdicts[i]

    while stack:
        i, asked, reader = stack.pop()
        steps += 1
        if steps > MAX_WALK or i < 0 or i >= len(consts) or consts[i] is None or consts[i].data:
            return None
        c, v = consts[i], verdict(i)
        if v is not None and (asked is None or v in ("both", asked)):
            continue
        if v is not None:  # the other convention
            if c.op in INVERTS and reader is not None and reader.line != c.line:
                return None
            found.append((i, c))
            continue
        if any(u < 0 or u >= len(consts) or consts[u] is None for u in c.uses):
            return None
        inner = FLIP.get(asked) if c.op in INVERTS else asked
        wrong = [u for u in c.uses if not (verdict(u) is not None and (inner is None or verdict(u) in ("both", inner)))]
        if not wrong:
            found.append((i, c))
        stack.extend((u, inner, c) for u in wrong)
    return found
