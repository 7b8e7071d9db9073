"""Matching the submission's traced tensors to the reference's stages: equal up to layout, or one head of a stage."""
from __future__ import annotations

import itertools

import torch

from grader.diagnosis.layout import close, equivalent, rtol_for, views
from grader.diagnosis.localize.model import Stage

PARALLEL = {"queries", "keys", "values", "repeated_keys", "repeated_values", "cached_keys", "cached_values"}  # computed side by side, not in a chain


def blocked(t: torch.Tensor) -> torch.Tensor:
    """Positions a score tensor blocks: -inf, a fill like -1e9, or scores less 10000 (BERT's additive mask)."""
    return torch.isneginf(t) | (t <= -1e3)


def shaped_as(c: torch.Tensor, x: torch.Tensor, limit: int = 24):
    """c itself when it has x's shape, else a few of its rearrangements with that shape."""
    if c.shape == x.shape:
        return [c]
    return list(itertools.islice(views(c, tuple(x.shape)), limit))



def prepare(stages: list[Stage]) -> list[Stage]:
    """Mark layout-only stages (merged after context, dropped weights in eval) and add the
    orders that are as right as the reference's (masking before scaling): returns those alternatives."""
    for k, s in enumerate(stages):
        s.strict = any(p.tensor.numel() == s.tensor.numel() and equivalent(s.tensor, p.tensor) for p in stages[:k])
    by = {s.name: s for s in stages}
    alts = []
    if {"scores", "scaled_scores", "masked_scores"} <= by.keys():
        m, raw = by["masked_scores"], by["scores"]
        if m.tensor.shape == raw.tensor.shape:
            alts.append(Stage("masked_unscaled_scores", m.line, torch.where(blocked(m.tensor), m.tensor, raw.tensor)))
    return alts


def part_dims(t: torch.Tensor, s: Stage) -> list[int]:
    """Dims of the stage whose one slice has t's size (one head, or one batch row, of a loop). Never one of the
    last two dims (tokens, features): a column of the angles is the positions themselves, not a loop's part."""
    n = s.tensor.numel()
    return [d for d, size in enumerate(s.tensor.shape[:-2]) if size > 1 and n // size == t.numel() and t.numel() < n]


def is_part(t: torch.Tensor, s: Stage) -> bool:
    """t is one slice of the stage (a per-head loop computes the stage head by head)."""
    return any(equivalent(t, s.tensor.select(d, j)) for d in part_dims(t, s) for j in range(s.tensor.shape[d]))


def matches(t: torch.Tensor, s: Stage, parts: bool = True) -> bool:
    if t.is_floating_point() and bool(torch.isneginf(s.tensor).any()) and not bool(torch.isneginf(t).any()):
        t = t.masked_fill(blocked(t), float("-inf"))  # a fill of -1e9 or finfo.min blocks as -inf does
    if t.numel() != s.tensor.numel():
        return parts and not s.strict and is_part(t, s)
    if s.strict:
        a, b = t.squeeze(), s.tensor.squeeze()
        return a.shape == b.shape and close(a, b, rtol_for(a, b))
    return equivalent(t, s.tensor)


def first_failing(stages: list[Stage], match: dict) -> Stage | None:
    """The first stage nothing reproduces, unless a later stage of its size is reproduced (the step was fused)."""
    for k, s in enumerate(stages):
        if match[s.name] is not None:
            continue
        fused = s.name not in PARALLEL and any(
            match[g.name] is not None and g.name not in PARALLEL and g.tensor.numel() == s.tensor.numel()
            for g in stages[k + 1:])
        if not fused:
            return s
    return None


