"""A configurable attention that can make each classic mistake on purpose.

The grader runs these (trusted) variants on the same weights and inputs as the submission:
when the submission's output equals a variant's, that variant's mistakes are the diagnosis.
"""
from __future__ import annotations

import itertools
import math

import torch

from grader.catalog import Exercise

SCALE_BUGS = ("no_scaling", "scale_not_sqrt", "scale_wrong_dim")
MASK_BUGS = ("mask_missing", "mask_inverted", "mask_inverted_keep_diag", "mask_diagonal", "mask_zero_fill", "mask_after_softmax")
DESCRIBE = {
    "no_scaling": "without the 1/√d_k scaling",
    "scale_not_sqrt": "with the scores divided by d_k instead of √d_k",
    "scale_wrong_dim": "with the scores scaled by √{dim} instead of √{right}",
    "softmax_wrong_dim": "with the softmax taken over dim -2 (queries) instead of -1 (keys)",
    "mask_missing": "with no mask at all",
    "mask_inverted": "with the mask inverted (past blocked, future visible)",
    "mask_inverted_keep_diag": "with the mask inverted (past blocked, future visible)",
    "mask_diagonal": "with the diagonal masked too",
    "mask_zero_fill": "with blocked scores set to 0 instead of -inf",
    "mask_after_softmax": "with the mask applied after the softmax",
    "heads_split_wrong": "with each token attending over heads instead of tokens (view without transpose)",
    "heads_split_view": "with heads split by a direct view to (b, heads, T, head_dim)",
    "heads_merge_wrong": "with heads merged by a view that skips the transpose back",
    "out_proj_missing": "without the output projection",
}
ALIASES = {"mask_inverted_keep_diag": "mask_inverted", "heads_split_view": "heads_split_wrong"}


def attend(q, k, v, *, blocked=None, bugs=frozenset(), scale_dim=None, wrong_dim=None):
    """softmax(q kᵀ / √d) v with optional mistakes; blocked is a bool mask, True = blocked."""
    d = scale_dim or q.size(-1)
    scores = q @ k.transpose(-2, -1)
    if blocked is not None and "mask_missing" not in bugs:
        if "mask_inverted" in bugs or "mask_inverted_keep_diag" in bugs:
            blocked = ~blocked
        if "mask_inverted_keep_diag" in bugs:
            eye = torch.eye(blocked.size(-2), blocked.size(-1), dtype=torch.bool)
            blocked = blocked & ~eye
        if "mask_diagonal" in bugs:
            eye = torch.eye(blocked.size(-2), blocked.size(-1), dtype=torch.bool)
            blocked = blocked | eye
    else:
        blocked = None
    if blocked is not None and "mask_after_softmax" not in bugs:
        scores = scores.masked_fill(blocked, 0.0 if "mask_zero_fill" in bugs else float("-inf"))
    if "no_scaling" not in bugs:
        if "scale_not_sqrt" in bugs:
            scores = scores / d
        elif "scale_wrong_dim" in bugs:
            scores = scores / math.sqrt(wrong_dim)
        else:
            scores = scores / math.sqrt(d)
    weights = torch.softmax(scores, dim=-2 if "softmax_wrong_dim" in bugs else -1)
    if blocked is not None and "mask_after_softmax" in bugs:
        weights = weights.masked_fill(blocked, 0.0)
    return weights @ v, weights


def _linear(x, params, prefix):
    w = params[f"{prefix}.weight"]
    b = params.get(f"{prefix}.bias")
    return x @ w.T + (b if b is not None else 0)


def module_forward(ex: Exercise, init: dict, params: dict, x: torch.Tensor, bugs=frozenset(), wrong_dim=None):
    """The exercise's module written as a function of its parameters, with optional mistakes."""
    roles = ex.roles
    q, k, v = (_linear(x, params, roles[r]) for r in "qkv")
    *lead, T, d_out = q.shape
    nh = ex.dim("heads", init) or 1
    hs = d_out // nh
    blocked = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1) if ex.has("causal") else None
    if "heads_split_wrong" in bugs:  # (b, T, nh, hs): attention runs across heads
        q, k, v = (t.view(*lead, T, nh, hs) for t in (q, k, v))
        if blocked is not None:
            blocked = torch.triu(torch.ones(nh, nh, dtype=torch.bool), diagonal=1)
        y, _ = attend(q, k, v, blocked=blocked, bugs=bugs, scale_dim=hs, wrong_dim=wrong_dim)
        y = y.reshape(*lead, T, d_out)
    else:
        if "heads_split_view" in bugs:
            q, k, v = (t.reshape(*lead, nh, T, hs) for t in (q, k, v))
        else:
            q, k, v = (t.unflatten(-1, (nh, hs)).transpose(-3, -2) for t in (q, k, v))  # (..., nh, T, hs)
        y, _ = attend(q, k, v, blocked=blocked, bugs=bugs, scale_dim=hs, wrong_dim=wrong_dim)  # (..., nh, T, hs)
        if "heads_merge_wrong" in bugs:
            y = y.reshape(*lead, T, d_out)
        else:
            y = y.transpose(-3, -2).reshape(*lead, T, d_out)
    if "o" in roles and "out_proj_missing" not in bugs:
        y = _linear(y, params, roles["o"])
    return y


def module_bugs(ex: Exercise, init: dict) -> list[str]:
    bugs = [*SCALE_BUGS, "softmax_wrong_dim"]
    if ex.has("causal"):
        bugs += MASK_BUGS
    if (ex.dim("heads", init) or 1) > 1:
        bugs += ["heads_split_wrong", "heads_split_view", "heads_merge_wrong"]
    if "o" in ex.roles:
        bugs.append("out_proj_missing")
    return bugs


def wrong_dims(ex: Exercise, init: dict) -> list[int]:
    """Sizes a learner might wrongly scale by: everything but the right one."""
    right = ex.dim("output", init) // (ex.dim("heads", init) or 1)
    dims = {ex.dim("input", init), ex.dim("output", init)} - {right, None}
    return sorted(dims)


def candidates(bugs: list[str], max_size: int = 2):
    """Bug sets to try, fewest mistakes first; mutually exclusive mistakes are not combined."""
    exclusive = [set(SCALE_BUGS), set(MASK_BUGS), {"heads_split_wrong", "heads_split_view"}]
    for size in range(1, max_size + 1):
        for combo in itertools.combinations(bugs, size):
            if any(len(group & set(combo)) > 1 for group in exclusive):
                continue
            yield frozenset(combo)


def describe(bugs: frozenset, wrong_dim=None, right_dim=None) -> str:
    parts = [DESCRIBE[b].format(dim=wrong_dim, right=right_dim) for b in sorted(bugs)]
    return " and ".join(parts)
