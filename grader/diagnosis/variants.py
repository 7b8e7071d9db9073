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
    # exercise 6: one fused projection [q | k | v] (GPT-2's c_attn)
    "qkv_order_kqv": "with c_attn's output read as [k | q | v]",
    "qkv_order_qvk": "with c_attn's output read as [q | v | k]",
    "qkv_order_kvq": "with c_attn's output read as [k | v | q]",
    "qkv_order_vqk": "with c_attn's output read as [v | q | k]",
    "qkv_order_vkq": "with c_attn's output read as [v | k | q]",
    "qkv_split_interleaved": "with c_attn's output split as (…, C, 3), interleaving q, k and v feature by feature",
    "qkv_split_per_head": "with c_attn's output split as (…, heads, 3, head_dim), a per-head [q | k | v] layout",
    "qkv_split_tokens": "with c_attn's output split along the tokens instead of the features",
}
ALIASES = {"mask_inverted_keep_diag": "mask_inverted", "heads_split_view": "heads_split_wrong"}
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
    if ex.has("gqa"):
        return gqa_forward(ex, init, params, x, bugs, wrong_dim)
    roles = ex.roles
    if "qkv" in roles:  # one fused projection (GPT-2's c_attn), split into q, k, v
        q, k, v = split_fused_qkv(_linear(x, params, roles["qkv"]), ex.dim("heads", init) or 1, bugs)
    else:
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
    if ex.has("gqa"):
        return gqa_bugs(ex, init)
    bugs = [*SCALE_BUGS, "softmax_wrong_dim"]
    if ex.has("causal"):
        bugs += MASK_BUGS
    if (ex.dim("heads", init) or 1) > 1:
        bugs += ["heads_split_wrong", "heads_split_view", "heads_merge_wrong"]
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


def wrong_dims(ex: Exercise, init: dict) -> list[int]:
    """Sizes a learner might wrongly scale by: everything but the right one."""
    right = ex.dim("output", init) // (ex.dim("heads", init) or 1)
    dims = {ex.dim("input", init), ex.dim("output", init)} - {right, None}
    if ex.dim("kv_heads", init):  # grouped-query attention: the width of the key projection
        dims = (dims | {ex.dim("kv_heads", init) * right}) - {right}
    return sorted(dims)


def candidates(bugs: list[str], max_size: int = 2):
    """Bug sets to try, fewest mistakes first; mutually exclusive mistakes are not combined."""
    exclusive = [set(SCALE_BUGS), set(MASK_BUGS), {"heads_split_wrong", "heads_split_view"},
                 {*QKV_ORDER_BUGS, *QKV_SPLIT_BUGS}, set(PADDING_BUGS), {*ROW_BUGS, "mask_zero_fill", "mask_after_softmax"},
                 {"online_no_rescale", "online_sum_not_rescaled", "online_acc_not_rescaled", "online_block_average"},
                 {"tiled_diagonal_unmasked", "tiled_diagonal_skipped"}]
    for size in range(1, max_size + 1):
        for combo in itertools.combinations(bugs, size):
            if any(len(group & set(combo)) > 1 for group in exclusive):
                continue
            yield frozenset(combo)


def describe(bugs: frozenset, wrong_dim=None, right_dim=None) -> str:
    parts = [DESCRIBE[b].format(dim=wrong_dim, right=right_dim) for b in sorted(bugs)]
    return " and ".join(parts)


# -- exercise 7: a key-padding mask plus an optional causal mask ----------------------------------------
PADDING_BUGS = ("padding_mask_ignored", "padding_mask_inverted", "padding_mask_on_queries", "padding_mask_broadcast")
ROW_BUGS = ("masked_rows_not_zero", "masked_rows_nan")
DESCRIBE.update({
    "padding_mask_ignored": "with the key-padding mask ignored",
    "padding_mask_inverted": "with the key-padding mask inverted (real tokens blocked, padding kept)",
    "padding_mask_on_queries": "with the padding mask applied to the queries, (B, 1, L, 1), instead of the keys",
    "padding_mask_broadcast": "with sequence b's padding mask applied to head b, (1, B, 1, S), instead of to sequence b",
    "causal_ignored": "with causal=True ignored (no causal mask)",
    "mask_combine_wrong": "with the causal and padding masks combined by & (blocked only where both block)",
    "masked_rows_not_zero": "with queries that have no key giving the average of all values instead of 0",
    "masked_rows_nan": "with queries that have no key giving NaN",
})
ALIASES["causal_ignored"] = "mask_missing"


def padded_attend(q, k, v, key_padding_mask=None, causal=False, bugs=frozenset(), wrong_dim=None):
    """Exercise 7's reference (B, H, L, d) with optional mistakes; NaN where a mistake cannot run for these shapes."""
    B, H, L, _ = q.shape
    S = k.size(-2)
    nan = torch.full((*q.shape[:-1], v.size(-1)), float("nan"), dtype=q.dtype)
    future = torch.ones(L, S, dtype=torch.bool).triu(1) if causal and "causal_ignored" not in bugs else None
    pad = None
    if key_padding_mask is not None and "padding_mask_ignored" not in bugs:
        m = ~key_padding_mask if "padding_mask_inverted" in bugs else key_padding_mask
        if "padding_mask_on_queries" in bugs:
            if L != S:
                return nan
            pad = m.view(B, 1, S, 1)
        elif "padding_mask_broadcast" in bugs:
            if B != H:
                return nan
            pad = m.view(1, B, 1, S)
        else:
            pad = m.view(B, 1, 1, S)
    if future is not None and pad is not None:
        blocked = (future & pad) if "mask_combine_wrong" in bugs else (future | pad)
    else:
        blocked = future if future is not None else pad
    core = bugs & {*SCALE_BUGS, "softmax_wrong_dim", "mask_zero_fill", "mask_after_softmax"}
    out, _ = attend(q, k, v, blocked=blocked, bugs=core, wrong_dim=wrong_dim)
    if blocked is not None and not core & {"mask_zero_fill", "mask_after_softmax"}:
        empty = blocked.expand(B, H, L, S).all(-1, keepdim=True)  # queries with no key: NaN from attend
        if "masked_rows_nan" in bugs:
            fill = torch.tensor(float("nan"), dtype=q.dtype)
        elif "masked_rows_not_zero" in bugs:
            fill = v.mean(-2, keepdim=True)
        else:
            fill = torch.zeros((), dtype=q.dtype)
        out = torch.where(empty, fill, out)
    return out


def padding_bugs(with_nan: bool) -> list[str]:
    rows = ["masked_rows_nan"] if with_nan else ["masked_rows_not_zero"]
    return [*PADDING_BUGS, "causal_ignored", "mask_combine_wrong", *rows, *SCALE_BUGS, "softmax_wrong_dim",
            "mask_zero_fill", "mask_after_softmax"]


# -- exercise 8: one decoding step with a KV cache ----------------------------------------------------
KV_BUGS = ("kv_cache_ignored", "kv_cache_mask_top_left", "kv_cache_mask_dropped", "kv_cache_order")
DESCRIBE.update({
    "kv_cache_ignored": "with the new tokens attending only to each other, not to the cached ones",
    "kv_cache_mask_top_left": "with the mask rows of positions 0..T-1 (mask[:T, :P+T]) instead of P..P+T-1",
    "kv_cache_mask_dropped": "with no causal mask once a cache is given",
    "kv_cache_order": "with the new keys and values placed before the cached ones",
})
ALIASES.update({"kv_cache_mask_top_left": "kv_cache_mask_offset", "kv_cache_mask_dropped": "kv_cache_mask_offset"})


def kv_step(ex: Exercise, init: dict, params: dict, x, k_cache=None, v_cache=None, bugs=frozenset()):
    """Exercise 8's forward(x, k_cache, v_cache) -> (y, k, v) as a function of its parameters, with optional mistakes."""
    roles = ex.roles
    q, k, v = (_linear(x, params, roles[r]) for r in "qkv")
    B, T, d_out = q.shape
    nh = ex.dim("heads", init) or 1
    hs = d_out // nh
    q, k, v = (t.view(B, T, nh, hs).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
    k_new, v_new = k, v
    if k_cache is not None:
        pair = ((k, k_cache), (v, v_cache)) if "kv_cache_order" in bugs else ((k_cache, k), (v_cache, v))
        k, v = (torch.cat(p, dim=2) for p in pair)
    P = k.size(2) - T
    future = torch.ones(P + T, P + T, dtype=torch.bool).triu(1)
    keys, values = (k_new, v_new) if "kv_cache_ignored" in bugs else (k, v)
    if "kv_cache_ignored" in bugs:
        blocked = future[:T, :T]
    elif "kv_cache_mask_top_left" in bugs:
        blocked = future[:T, : P + T]
    elif "kv_cache_mask_dropped" in bugs and k_cache is not None:
        blocked = None
    else:
        blocked = future[P : P + T, : P + T]
    y, _ = attend(q, keys, values, blocked=blocked)  # (B, nh, T, hs)
    y = _linear(y.transpose(1, 2).reshape(B, T, d_out), params, roles["o"])
    return y, k, v


# -- exercise 9: grouped-query attention ---------------------------------------------------------------
DESCRIBE.update({
    "gqa_groups_tiled": "with the KV heads tiled (k0, k1, k0, k1: repeat) instead of each serving consecutive query heads "
                        "(k0, k0, k1, k1: repeat_interleave)",
})
ALIASES["gqa_groups_tiled"] = "gqa_group_mapping"


def gqa_forward(ex: Exercise, init: dict, params: dict, x, bugs=frozenset(), wrong_dim=None):
    """Exercise 9: causal attention with num_kv_groups key/value heads, each shared by consecutive query heads."""
    roles = ex.roles
    nh, nkv = ex.dim("heads", init), ex.dim("kv_heads", init)
    q = _linear(x, params, roles["q"])
    *lead, T, d_out = q.shape
    hs = d_out // nh
    q = q.unflatten(-1, (nh, hs)).transpose(-3, -2)  # (..., nh, T, hs)
    k, v = (_linear(x, params, roles[r]).unflatten(-1, (nkv, hs)).transpose(-3, -2) for r in "kv")  # (..., nkv, T, hs)
    if "gqa_groups_tiled" in bugs:
        k, v = (t.repeat(*([1] * len(lead)), nh // nkv, 1, 1) for t in (k, v))
    else:
        k, v = (t.repeat_interleave(nh // nkv, dim=-3) for t in (k, v))
    blocked = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    y, _ = attend(q, k, v, blocked=blocked, bugs=bugs, scale_dim=hs, wrong_dim=wrong_dim)  # (..., nh, T, hs)
    y = y.reshape(*lead, T, d_out) if "heads_merge_wrong" in bugs else y.transpose(-3, -2).reshape(*lead, T, d_out)
    return y if "out_proj_missing" in bugs else _linear(y, params, roles["o"])


def gqa_bugs(ex: Exercise, init: dict) -> list[str]:
    bugs = [*SCALE_BUGS, "softmax_wrong_dim", *MASK_BUGS, "heads_merge_wrong", "out_proj_missing"]
    if 1 < ex.dim("kv_heads", init) < ex.dim("heads", init):
        bugs.append("gqa_groups_tiled")
    return bugs


# -- exercise 10: tiled attention with an online softmax ------------------------------------------------
TILED_BUGS = ("online_no_rescale", "online_sum_not_rescaled", "online_acc_not_rescaled", "online_block_average",
              "tiled_remainder_dropped", "tiled_diagonal_unmasked", "tiled_diagonal_skipped")
DESCRIBE.update({
    "online_no_rescale": "with the running sum and accumulator never rescaled by exp(m_old - m_new) when the maximum grows",
    "online_sum_not_rescaled": "with the running sum l not rescaled by exp(m_old - m_new) when the maximum grows",
    "online_acc_not_rescaled": "with the accumulator acc not rescaled by exp(m_old - m_new) when the maximum grows",
    "online_block_average": "with a separate softmax per key block, the blocks' outputs then averaged",
    "tiled_remainder_dropped": "with the last, shorter block of keys left out",
    "tiled_diagonal_unmasked": "with the key blocks that cross the diagonal left unmasked",
    "tiled_diagonal_skipped": "with the key blocks that cross the diagonal skipped",
})
ALIASES.update({"online_sum_not_rescaled": "online_softmax_no_rescale", "online_acc_not_rescaled": "online_softmax_no_rescale",
                "online_no_rescale": "online_softmax_no_rescale", "online_block_average": "online_softmax_block_average",
                "tiled_diagonal_unmasked": "tiled_causal_diagonal", "tiled_diagonal_skipped": "tiled_causal_diagonal"})


def tiled_attend(q, k, v, causal=False, block_size=64, bugs=frozenset(), wrong_dim=None):
    """Exercise 10 computed block by block, as a learner would, with optional mistakes (NaN where a row has no key)."""
    B, H, L, d_k = q.shape
    S = k.size(-2)
    if "no_scaling" in bugs:
        scale = 1.0
    elif "scale_not_sqrt" in bugs:
        scale = 1.0 / d_k
    elif "scale_wrong_dim" in bugs:
        scale = 1.0 / math.sqrt(wrong_dim)
    else:
        scale = 1.0 / math.sqrt(d_k)
    end = (S // block_size) * block_size if "tiled_remainder_dropped" in bugs else S
    rows = []
    for i0 in range(0, L, block_size):
        qb = q[:, :, i0 : i0 + block_size] * scale
        bq = qb.size(-2)
        m = torch.full((B, H, bq, 1), float("-inf"), dtype=q.dtype)
        l = torch.zeros(B, H, bq, 1, dtype=q.dtype)
        acc = torch.zeros(B, H, bq, v.size(-1), dtype=q.dtype)
        parts = []
        for j0 in range(0, end, block_size):
            kb, vb = k[:, :, j0 : j0 + block_size], v[:, :, j0 : j0 + block_size]
            if causal and j0 > i0 + bq - 1:
                break  # every key here is in the future of every query of the block
            crosses = causal and j0 + kb.size(-2) - 1 > i0
            if crosses and "tiled_diagonal_skipped" in bugs:
                continue
            s = qb @ kb.transpose(-2, -1)
            if crosses and "tiled_diagonal_unmasked" not in bugs:
                qi = torch.arange(i0, i0 + bq)[:, None]
                kj = torch.arange(j0, j0 + kb.size(-2))[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            if "online_block_average" in bugs:
                parts.append(torch.softmax(s, dim=-1) @ vb)
                continue
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            keep_l = "online_no_rescale" in bugs or "online_sum_not_rescaled" in bugs
            keep_acc = "online_no_rescale" in bugs or "online_acc_not_rescaled" in bugs
            l = (l if keep_l else l * corr) + p.sum(dim=-1, keepdim=True)
            acc = (acc if keep_acc else acc * corr) + p @ vb
            m = m_new
        if "online_block_average" in bugs:
            rows.append(torch.stack(parts).mean(0) if parts else torch.full_like(acc, float("nan")))
        else:
            rows.append(acc / l)
    return torch.cat(rows, dim=2)


# -- exercise 11: rotary position embeddings -------------------------------------------------------------
ROPE_BUGS = ("rope_interleaved", "rope_freq_no_2", "rope_freq_not_inverted", "rope_direction", "rope_positions_ignored",
             "rope_base_ignored", "rope_float32_angles")
DESCRIBE.update({
    "rope_interleaved": "with pairs (x[2i], x[2i+1]) (interleaved) instead of (x[i], x[i + d/2]) (half-split)",
    "rope_freq_no_2": "with theta_i = base ** (-i / d) instead of base ** (-2i / d)",
    "rope_freq_not_inverted": "with theta_i = base ** (2i / d) instead of base ** (-2i / d)",
    "rope_direction": "with every pair rotated by -angle instead of +angle",
    "rope_positions_ignored": "with positions 0..T-1 instead of the positions given",
    "rope_base_ignored": "with base 10000 whatever base is given",
    "rope_float32_angles": "with the angles computed in float32",
})
ALIASES.update({"rope_interleaved": "rope_pairing", "rope_freq_no_2": "rope_frequencies", "rope_freq_not_inverted": "rope_frequencies",
                "rope_float32_angles": "rope_angle_precision"})


def rope_variant(x, positions, base=10000.0, bugs=frozenset()):
    """Exercise 11's rotation with optional mistakes."""
    d = x.size(-1)
    half = d // 2
    work = torch.float32 if "rope_float32_angles" in bugs else torch.float64
    base = 10000.0 if "rope_base_ignored" in bugs else base
    i = torch.arange(0, half, dtype=work)
    if "rope_freq_no_2" in bugs:
        theta = base ** (-i / d)
    elif "rope_freq_not_inverted" in bugs:
        theta = base ** (i * 2 / d)
    else:
        theta = base ** (-i * 2 / d)
    pos = torch.arange(x.size(-2)) if "rope_positions_ignored" in bugs else positions
    angles = pos.to(work)[:, None] * theta[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    if "rope_direction" in bugs:
        sin = -sin
    if "rope_interleaved" in bugs:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).flatten(-2)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


# -- exercise 12: cross-attention ---------------------------------------------------------------------------
CROSS_BUGS = ("cross_kv_from_queries", "cross_causal_mask")
DESCRIBE.update({
    "cross_kv_from_queries": "with keys and values projected from x instead of from context (self-attention)",
    "cross_causal_mask": "with a causal mask over (queries, context tokens)",
})


def cross_forward(ex: Exercise, init: dict, params: dict, x, context, mask=None, bugs=frozenset(), wrong_dim=None):
    """Exercise 12's forward(x, context, context_padding_mask) as a function of its parameters, with optional mistakes."""
    roles = ex.roles
    nh = ex.dim("heads", init) or 1
    B, T, _ = x.shape
    src = x if "cross_kv_from_queries" in bugs else context
    d_out = params[f"{roles['q']}.weight"].shape[0]
    if src.size(-1) != params[f"{roles['k']}.weight"].shape[1]:
        return torch.full((B, T, d_out), float("nan"), dtype=x.dtype)
    q = _linear(x, params, roles["q"])
    k, v = _linear(src, params, roles["k"]), _linear(src, params, roles["v"])
    S, hs = k.size(1), d_out // nh
    q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
    k, v = (t.view(B, S, nh, hs).transpose(1, 2) for t in (k, v))  # (B, nh, S, hs)
    blocked = None
    if mask is not None and "padding_mask_ignored" not in bugs:
        if mask.size(-1) < S:
            return torch.full((B, T, d_out), float("nan"), dtype=x.dtype)
        mask = mask[..., :S]  # keys from x: a mask that still runs must have been cut to x's length
        m = ~mask if "padding_mask_inverted" in bugs else mask
        if "padding_mask_on_queries" in bugs:
            if T != S:
                return torch.full((B, T, d_out), float("nan"), dtype=x.dtype)
            blocked = m.view(B, 1, S, 1)
        elif "padding_mask_broadcast" in bugs:
            if B != nh:
                return torch.full((B, T, d_out), float("nan"), dtype=x.dtype)
            blocked = m.view(1, B, 1, S)
        else:
            blocked = m.view(B, 1, 1, S)
    if "cross_causal_mask" in bugs:
        future = torch.ones(T, S, dtype=torch.bool).triu(1)
        blocked = future if blocked is None else blocked | future
    core = bugs & {*SCALE_BUGS, "softmax_wrong_dim", "mask_zero_fill", "mask_after_softmax"}
    y, _ = attend(q, k, v, blocked=blocked, bugs=core, scale_dim=hs, wrong_dim=wrong_dim)  # (B, nh, T, hs)
    y = y.reshape(B, T, d_out) if "heads_merge_wrong" in bugs else y.transpose(1, 2).reshape(B, T, d_out)
    return y if "out_proj_missing" in bugs else _linear(y, params, roles["o"])


def cross_bugs(ex: Exercise, init: dict) -> list[str]:
    bugs = [*CROSS_BUGS, *PADDING_BUGS, *SCALE_BUGS, "softmax_wrong_dim", "mask_zero_fill", "mask_after_softmax",
            "out_proj_missing"]
    if (ex.dim("heads", init) or 1) > 1:
        bugs.append("heads_merge_wrong")
    return bugs
