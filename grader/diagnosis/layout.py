"""Tensor equality up to a reshape (head split or merge) and a permutation of dims, within a dtype's tolerance.

Used to align a submission's intermediate tensors with the reference's stages (grader/diagnosis/localize/).
"""
from __future__ import annotations

import itertools
import math

import torch

from grader.numerics import close_to_scale as close, rtol_for  # localize.py takes both from here

MAX_VIEWS = 240


def same_values(a: torch.Tensor, b: torch.Tensor, rtol: float) -> bool:
    """The cheap check: the same multiset of values."""
    return a.numel() == b.numel() and close(a.reshape(-1).double().sort().values, b.reshape(-1).double().sort().values, rtol)


def splits(shape: tuple[int, ...], target: tuple[int, ...]):
    """Shapes refining `shape` (each dim split into consecutive dims) whose sizes are a rearrangement of target."""
    def rec(i, pool):
        if i == len(shape):
            if not pool:
                yield ()
            return
        n = shape[i]
        for k in range(1, len(pool) + 1):
            for pick in set(itertools.permutations(pool, k)):
                if math.prod(pick) == n:
                    rest = list(pool)
                    for p in pick:
                        rest.remove(p)
                    for tail in rec(i + 1, rest):
                        yield pick + tail
    if len(target) <= 5:
        yield from rec(0, list(target))


def stable_perms(shape: tuple[int, ...], target: tuple[int, ...]):
    """Permutations p with shape[p] == target that keep dims of equal size in their order."""
    if len(shape) != len(target) or sorted(shape) != sorted(target):
        return
    for p in itertools.permutations(range(len(shape))):
        if all(shape[j] == t for j, t in zip(p, target)):
            if all(p.index(i) < p.index(j) for i in range(len(shape)) for j in range(i + 1, len(shape)) if shape[i] == shape[j]):
                yield p


def views(a: torch.Tensor, target: tuple[int, ...]):
    count = 0
    for shape in splits(tuple(a.shape), target):
        r = a.reshape(shape)
        for p in stable_perms(shape, target):
            yield r.permute(p)
            count += 1
            if count >= MAX_VIEWS:
                return


def equivalent(a: torch.Tensor, b: torch.Tensor, rtol: float | None = None) -> bool:
    """a equals b up to a reshape (head split/merge) and a permutation of dims, within tolerance."""
    rtol = rtol or rtol_for(a, b)
    if a.numel() != b.numel() or not same_values(a, b, rtol):
        return False
    a, b = a.squeeze(), b.squeeze()
    if a.shape == b.shape and close(a, b, rtol):
        return True
    for x, y in ((a, b), (b, a)):
        if x.dim() <= y.dim() and any(close(v, y, rtol) for v in views(x, tuple(y.shape))):
            return True
    return False


def affine(y: torch.Tensor, x: torch.Tensor, rtol: float):
    """("ratio", k) when y ≈ k·x, ("offset", k) when y ≈ x + k, for a constant k; else None."""
    fin = torch.isfinite(x) & torch.isfinite(y)
    if not fin.any() or not torch.equal(torch.isfinite(x), torch.isfinite(y)):
        return None
    xs, ys = x[fin], y[fin]
    scale = float(ys.abs().max()) + 1e-12
    denom = float((xs * xs).sum())
    if denom > 0:
        k = float((xs * ys).sum()) / denom
        if abs(k - 1) > 1e-3 and float((ys - k * xs).abs().max()) <= rtol * scale:
            return "ratio", k
    k = float((ys - xs).mean())
    if abs(k) > rtol * scale and float((ys - xs - k).abs().max()) <= rtol * scale:
        return "offset", k
    return None
