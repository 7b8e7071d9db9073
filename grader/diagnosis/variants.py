"""A configurable attention that can make each classic mistake on purpose.

The grader runs these (trusted) variants on the same weights and inputs as the submission:
when the submission's output equals a variant's, that variant's mistakes are the diagnosis.
Here: the mistakes any attention can make, for module exercises described by their metadata
(roles, dims: a fused qkv projection, grouped key/value heads). An exercise's own mistakes live
in its module (MISTAKES, ALIASES, EXCLUSIVE; grader/pack.py), merged in by mistakes_of().
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch

from grader.catalog import Exercise

SCALE_BUGS = ("no_scaling", "scale_not_sqrt", "scale_wrong_dim")
MASK_BUGS = ("mask_missing", "mask_inverted", "mask_inverted_keep_diag", "mask_inverted_shifted", "mask_diagonal",
             "mask_zero_fill", "mask_after_softmax")
DESCRIBE = {
    "no_scaling": "without the 1/√d_k scaling",
    "scale_not_sqrt": "with the scores divided by d_k instead of √d_k",
    "scale_wrong_dim": "with the scores scaled by √{dim} instead of √{right}",
    "softmax_wrong_dim": "with the softmax taken over dim -2 (queries) instead of -1 (keys)",
    "mask_missing": "with no mask at all",
    "mask_inverted": "with the mask inverted (past blocked, future visible)",
    "mask_inverted_keep_diag": "with the mask inverted (past blocked, future visible)",
    "mask_inverted_shifted": "with the mask inverted (tril(diagonal=1) as the blocked positions: the past, the token and the next one blocked)",
    "mask_diagonal": "with the diagonal masked too",
    "mask_zero_fill": "with blocked scores set to 0 instead of -inf",
    "mask_after_softmax": "with the mask applied after the softmax",
    "heads_split_wrong": "with each token attending over heads instead of tokens (view without transpose)",
    "heads_split_view": "with heads split by a direct view to (b, heads, T, head_dim)",
    "heads_split_interleaved": "with heads split as (…, head_dim, heads), so each head takes every heads-th feature",
    "kv_heads_split_view": "with the keys and values split by a direct view to (b, kv_heads, T, head_dim)",
    "heads_split_values_kept": "with the values split without the transpose, (b, T, heads, head_dim) used as (b, heads, T, head_dim)",
    "heads_split_kv_kept": "with the keys and values split without the transpose, (b, T, heads, head_dim) used as (b, heads, T, head_dim)",
    "heads_not_split": "with the heads never split: one head as wide as d_out",
    "heads_merge_wrong": "with heads merged by a view that skips the transpose back",
    "heads_merge_interleaved": "with heads merged as (…, head_dim, heads), interleaving the heads' features",
    "out_proj_missing": "without the output projection",
    # one fused projection [q | k | v] (roles.qkv, e.g. GPT-2's c_attn)
    "qkv_order_kqv": "with c_attn's output read as [k | q | v]",
    "qkv_order_qvk": "with c_attn's output read as [q | v | k]",
    "qkv_order_kvq": "with c_attn's output read as [k | v | q]",
    "qkv_order_vqk": "with c_attn's output read as [v | q | k]",
    "qkv_order_vkq": "with c_attn's output read as [v | k | q]",
    "qkv_split_interleaved": "with c_attn's output split as (…, C, 3), interleaving q, k and v feature by feature",
    "qkv_split_per_head": "with c_attn's output split as (…, heads, 3, head_dim), a per-head [q | k | v] layout",
    "qkv_split_tokens": "with c_attn's output split along the tokens instead of the features",
}
ALIASES = {"mask_inverted_keep_diag": "mask_inverted", "mask_inverted_shifted": "mask_inverted", "heads_split_view": "heads_split_wrong",
           "heads_split_interleaved": "heads_split_wrong", "kv_heads_split_view": "heads_split_wrong",
           "heads_split_values_kept": "heads_split_wrong", "heads_split_kv_kept": "heads_split_wrong",
           "heads_not_split": "heads_split_wrong",
           "heads_merge_interleaved": "heads_merge_wrong"}
QKV_ORDER_BUGS = ("qkv_order_kqv", "qkv_order_qvk", "qkv_order_kvq", "qkv_order_vqk", "qkv_order_vkq")
QKV_SPLIT_BUGS = ("qkv_split_interleaved", "qkv_split_per_head", "qkv_split_tokens")
ALIASES.update({b: "qkv_split_order" for b in QKV_ORDER_BUGS})
ALIASES.update({b: "qkv_split_wrong" for b in QKV_SPLIT_BUGS})


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
        if "mask_inverted_shifted" in bugs:  # the keep-mask with the next token kept too, used as the blocked one
            blocked = torch.ones(blocked.shape[-2:], dtype=torch.bool).tril(diagonal=1)
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


def linear(x, params, prefix):
    w = params[f"{prefix}.weight"]
    b = params.get(f"{prefix}.bias")
    return x @ w.T + (b if b is not None else 0)


def merge_heads(y: torch.Tensor, bugs) -> torch.Tensor:
    """(..., nh, T, hs) -> (..., T, nh·hs), or merged as a mistake does: without the transpose, or heads last."""
    *lead, nh, T, hs = y.shape
    if "heads_merge_wrong" in bugs:
        return y.reshape(*lead, T, nh * hs)
    if "heads_merge_interleaved" in bugs:
        return y.movedim(-3, -1).reshape(*lead, T, nh * hs)
    return y.transpose(-3, -2).reshape(*lead, T, nh * hs)


def module_forward(ex: Exercise, init: dict, params: dict, x: torch.Tensor, bugs=frozenset(), wrong_dim=None):
    """The exercise's module written as a function of its parameters, with optional mistakes."""
    if ex.dims.get("kv_heads"):  # grouped key/value heads
        return grouped_forward(ex, init, params, x, bugs, wrong_dim)
    roles = ex.roles
    if "qkv" in roles:  # one fused projection (GPT-2's c_attn), split into q, k, v
        q, k, v = split_fused_qkv(linear(x, params, roles["qkv"]), ex.dim("heads", init) or 1, bugs)
    else:
        q, k, v = (linear(x, params, roles[r]) for r in "qkv")
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
        elif "heads_not_split" in bugs:  # one head of width d_out (still scaled as the contract's heads are)
            q, k, v = (t.unsqueeze(-3) for t in (q, k, v))
        elif "heads_split_interleaved" in bugs:
            q, k, v = (t.unflatten(-1, (hs, nh)).movedim(-1, -3) for t in (q, k, v))
        else:
            q, k, v = (t.unflatten(-1, (nh, hs)).transpose(-3, -2) for t in (q, k, v))  # (..., nh, T, hs)
        kept = "heads_split_values_kept" in bugs or "heads_split_kv_kept" in bugs  # a split half fixed
        if kept and T != nh:  # (b, T, heads, hs) only lines up with (b, heads, T, hs) when T == heads
            return torch.full((*lead, T, d_out), float("nan"), dtype=q.dtype)
        if kept:
            v = v.transpose(-3, -2)
            k = k.transpose(-3, -2) if "heads_split_kv_kept" in bugs else k
        y, _ = attend(q, k, v, blocked=blocked, bugs=bugs, scale_dim=hs, wrong_dim=wrong_dim)  # (..., nh, T, hs)
        y = merge_heads(y, bugs)  # (..., T, d_out)
    if "o" in roles and "out_proj_missing" not in bugs:
        y = linear(y, params, roles["o"])
    return y


def module_bugs(ex: Exercise, init: dict) -> list[str]:
    if ex.dims.get("kv_heads"):
        return grouped_bugs(ex, init)
    bugs = [*SCALE_BUGS, "softmax_wrong_dim"]
    if ex.has("causal"):
        bugs += MASK_BUGS
    if (ex.dim("heads", init) or 1) > 1:
        bugs += ["heads_split_wrong", "heads_split_view", "heads_split_interleaved", "heads_split_values_kept",
                 "heads_split_kv_kept", "heads_not_split", "heads_merge_wrong",
                 "heads_merge_interleaved"]
    if "o" in ex.roles:
        bugs.append("out_proj_missing")
    if "qkv" in ex.roles:
        bugs += [*QKV_ORDER_BUGS, *QKV_SPLIT_BUGS]
    return bugs


def split_fused_qkv(qkv: torch.Tensor, nh: int, bugs=frozenset()):
    """(..., T, 3C) -> q, k, v (..., T, C): [q | k | v] along the features, or a mistaken split.

    A split that cannot run for this shape (along 3 token chunks when T % 3 != 0) gives NaN,
    which matches nothing."""
    *lead, T, C3 = qkv.shape
    C = C3 // 3
    order = next((b for b in bugs if b in QKV_ORDER_BUGS), None)
    if "qkv_split_interleaved" in bugs:
        parts = qkv.unflatten(-1, (C, 3)).unbind(-1)
    elif "qkv_split_per_head" in bugs:
        parts = [t.flatten(-2) for t in qkv.unflatten(-1, (nh, 3, C // nh)).unbind(-2)]
    elif "qkv_split_tokens" in bugs:
        if T % 3:
            return (torch.full((*lead, T, C), float("nan"), dtype=qkv.dtype),) * 3
        parts = [t.reshape(*lead, T, C) for t in qkv.chunk(3, dim=-2)]
    else:
        parts = qkv.split(C, dim=-1)
    if order is None:
        return tuple(parts)
    names = order.removeprefix("qkv_order_")  # the learner's names for chunks 0, 1, 2
    return tuple(parts[names.index(r)] for r in "qkv")


def head_size(ex: Exercise, init: dict) -> int:
    """The size the scores are scaled by: one head's width."""
    return ex.dim("output", init) // (ex.dim("heads", init) or 1)


def wrong_dims(ex: Exercise, init: dict, tokens: int | None = None) -> list[int]:
    """Sizes a learner might wrongly scale by: everything but the right one (the input's token count too, when given)."""
    right = head_size(ex, init)
    dims = {ex.dim("input", init), ex.dim("output", init), tokens} - {right, None}
    if ex.dim("kv_heads", init):  # grouped-query attention: the width of the key projection, the group width
        group = ex.dim("heads", init) // ex.dim("kv_heads", init)  # (its square: scores divided by the group width)
        dims = (dims | {ex.dim("kv_heads", init) * right, group, group * group}) - {right}
    return sorted(dims)


EXCLUSIVE = [set(SCALE_BUGS), set(MASK_BUGS), {"heads_split_wrong", "heads_split_view", "heads_split_interleaved",
             "kv_heads_split_view", "heads_split_values_kept", "heads_split_kv_kept", "heads_not_split"},
            {"heads_not_split", "heads_merge_wrong", "heads_merge_interleaved"}, {"heads_merge_wrong", "heads_merge_interleaved"}, {*QKV_ORDER_BUGS, *QKV_SPLIT_BUGS}]


def candidates(bugs: list[str], max_size: int = 2, exclusive: list[set] | None = None):
    """Bug sets to try, fewest mistakes first; mutually exclusive mistakes are not combined."""
    exclusive = EXCLUSIVE if exclusive is None else exclusive
    for size in range(1, max_size + 1):
        for combo in itertools.combinations(bugs, size):
            if any(len(group & set(combo)) > 1 for group in exclusive):
                continue
            yield frozenset(combo)


def describe(bugs: frozenset, wrong_dim=None, right_dim=None, table: dict | None = None, key=None) -> str:
    """The mistakes in words, in the order of key (by name without it)."""
    table = DESCRIBE if table is None else table
    parts = [table[b].format(dim=wrong_dim, right=right_dim) for b in sorted(bugs, key=key)]
    return " and ".join(parts)


@dataclass(frozen=True)
class Mistakes:
    describe: dict
    aliases: dict
    exclusive: list


def mistakes_of(ex) -> Mistakes:
    """The generic mistakes plus the exercise module's MISTAKES, ALIASES and EXCLUSIVE."""
    from grader.pack import exercise_module

    em = exercise_module(ex)
    if em is None:
        return Mistakes(dict(DESCRIBE), dict(ALIASES), list(EXCLUSIVE))
    return Mistakes({**DESCRIBE, **em.mistakes}, {**ALIASES, **em.aliases}, [*EXCLUSIVE, *map(set, em.exclusive)])


# -- key-padding masks (any attention over padded sequences) ------------------------------------------------
PADDING_BUGS = ("padding_mask_ignored", "padding_mask_inverted", "padding_mask_on_queries", "padding_mask_broadcast")
DESCRIBE.update({
    "padding_mask_ignored": "with the key-padding mask ignored",
    "padding_mask_inverted": "with the key-padding mask inverted (real tokens blocked, padding kept)",
    "padding_mask_on_queries": "with the padding mask applied to the queries, (B, 1, L, 1), instead of the keys",
    "padding_mask_broadcast": "with sequence b's padding mask applied to head b, (1, B, 1, S), instead of to sequence b",
})
EXCLUSIVE.append(set(PADDING_BUGS))


# -- grouped key/value heads (dims.kv_heads) ---------------------------------------------------------------
DESCRIBE.update({
    "gqa_groups_tiled": "with the KV heads tiled (k0, k1, k0, k1: repeat) instead of each serving consecutive query heads "
                        "(k0, k0, k1, k1: repeat_interleave)",
    "gqa_repeat_tokens": "with the KV heads repeated along the tokens axis (repeat_interleave on dim -2), then reshaped "
                         "into query heads",
})
ALIASES["gqa_groups_tiled"] = "gqa_group_mapping"
ALIASES["gqa_repeat_tokens"] = "gqa_kv_heads_wrong"
EXCLUSIVE.append({"gqa_groups_tiled", "gqa_repeat_tokens"})


def grouped_forward(ex: Exercise, init: dict, params: dict, x, bugs=frozenset(), wrong_dim=None):
    """Causal attention with num_kv_groups key/value heads, each shared by consecutive query heads."""
    roles = ex.roles
    nh, nkv = ex.dim("heads", init), ex.dim("kv_heads", init)
    q = linear(x, params, roles["q"])
    *lead, T, d_out = q.shape
    hs = d_out // nh
    if "heads_split_view" in bugs:
        q = q.reshape(*lead, nh, T, hs)
    else:
        q = q.unflatten(-1, (nh, hs)).transpose(-3, -2)  # (..., nh, T, hs)
    if "heads_split_view" in bugs or "kv_heads_split_view" in bugs:
        k, v = (linear(x, params, roles[r]).reshape(*lead, nkv, T, hs) for r in "kv")
    else:
        k, v = (linear(x, params, roles[r]).unflatten(-1, (nkv, hs)).transpose(-3, -2) for r in "kv")  # (..., nkv, T, hs)
    if "gqa_groups_tiled" in bugs:
        k, v = (t.repeat(*([1] * len(lead)), nh // nkv, 1, 1) for t in (k, v))
    elif "gqa_repeat_tokens" in bugs:  # (..., nkv, T·g, hs) read as (..., nh, T, hs)
        k, v = (t.repeat_interleave(nh // nkv, dim=-2).reshape(*lead, nh, T, hs) for t in (k, v))
    else:
        k, v = (t.repeat_interleave(nh // nkv, dim=-3) for t in (k, v))
    blocked = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    y, _ = attend(q, k, v, blocked=blocked, bugs=bugs, scale_dim=hs, wrong_dim=wrong_dim)  # (..., nh, T, hs)
    y = merge_heads(y, bugs)  # (..., T, d_out)
    return y if "out_proj_missing" in bugs else linear(y, params, roles["o"])


def grouped_bugs(ex: Exercise, init: dict) -> list[str]:
    bugs = [*SCALE_BUGS, "softmax_wrong_dim", *MASK_BUGS, "heads_split_view", "kv_heads_split_view", "heads_merge_wrong",
            "heads_merge_interleaved", "out_proj_missing"]
    if 1 < ex.dim("kv_heads", init) < ex.dim("heads", init):
        bugs.append("gqa_groups_tiled")
    if ex.dim("kv_heads", init) < ex.dim("heads", init):
        bugs.append("gqa_repeat_tokens")
    return bugs


