"""Live numbers for the attention topics, computed with torch at render time (fixed seeds)."""
from __future__ import annotations

import math
from functools import cache

import torch
import torch.nn as nn

TOKENS = ("Your", "journey", "starts", "with", "one", "step")
EMBEDDINGS = [
    [0.43, 0.15, 0.89],
    [0.55, 0.87, 0.66],
    [0.57, 0.85, 0.64],
    [0.22, 0.58, 0.33],
    [0.77, 0.25, 0.10],
    [0.05, 0.80, 0.55],
]


def f4(x: float) -> str:
    return f"{x:.4f}"


def inputs() -> torch.Tensor:
    return torch.tensor(EMBEDDINGS)


def table(rows, cols=(), code=()) -> dict:
    """Rows of cells; cols are extra (language-neutral) headings; code lists columns holding code."""
    return {"cols": list(cols), "rows": [list(r) for r in rows], "code": list(code)}


def matrix_rows(labels, m: torch.Tensor) -> list:
    return [[label, *map(f4, row.tolist())] for label, row in zip(labels, m)]


def panel(w: torch.Tensor, rows, cols, blocked=None) -> dict:
    blocked = blocked if blocked is not None else torch.zeros_like(w, dtype=torch.bool)
    return {"w": w.tolist(), "rows": list(rows), "cols": list(cols), "blocked": blocked.tolist()}


def causal_blocked(t: int) -> torch.Tensor:
    return torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)


@cache
def qkv() -> dict:
    x = inputs()
    scores = x @ x.T
    weights = torch.softmax(scores, dim=-1)
    context = weights @ x
    j = scores[1]
    order = j.argsort(descending=True).tolist()
    return {
        "values": {
            "n": len(TOKENS),
            "d": x.shape[1],
            "journey_self": f4(j[1].item()),
            "journey_next": TOKENS[order[1]],
            "journey_next_score": f4(j[order[1]].item()),
            "journey_low": TOKENS[order[-1]],
            "journey_low_score": f4(j[order[-1]].item()),
            "w_journey_journey": f4(weights[1, 1].item()),
            "row_err": f"{(weights.sum(-1) - 1).abs().max().item():.1e}",
            "spread": f4((scores.max(-1).values - scores.min(-1).values).max().item()),
        },
        "tables": {
            "scores": table(matrix_rows(TOKENS, scores), TOKENS),
            "weights": table(matrix_rows(TOKENS, weights), TOKENS),
            "context": table(matrix_rows(TOKENS, context), ("d1", "d2", "d3")),
        },
        "maps": {"weights": [panel(weights, TOKENS, TOKENS)]},
    }


@cache
def scaling() -> dict:
    g = torch.Generator().manual_seed(0)
    n_keys, trials = 16, 1000
    rows = []
    for d in (4, 8, 16, 32, 64, 128, 256, 512):
        q = torch.randn(trials, 1, d, generator=g)
        k = torch.randn(trials, n_keys, d, generator=g)
        raw = (q @ k.transpose(1, 2)).squeeze(1)
        scaled = raw / math.sqrt(d)
        p_raw, p_scaled = raw.softmax(-1), scaled.softmax(-1)

        def entropy(p):
            return -(p * p.clamp_min(1e-30).log()).sum(-1).mean().item()

        rows.append([str(d), f"{raw.var().item():.1f}", f"{scaled.var().item():.3f}",
                     f"{p_raw.max(-1).values.mean().item():.3f}", f"{p_scaled.max(-1).values.mean().item():.3f}",
                     f"{entropy(p_raw):.3f}", f"{entropy(p_scaled):.3f}"])
    d_pic = 256
    q = torch.randn(6, d_pic, generator=g)
    k = torch.randn(6, d_pic, generator=g)
    raw = q @ k.T
    names_q = [f"q{i + 1}" for i in range(6)]
    names_k = [f"k{i + 1}" for i in range(6)]
    return {
        "values": {
            "n_keys": n_keys, "trials": trials, "max_entropy": f"{math.log(n_keys):.3f}",
            "first": rows[0], "last": rows[-1], "d_pic": d_pic,
            "pic_raw_max": f"{raw.softmax(-1).max(-1).values.min().item():.3f}",
        },
        "tables": {"variance": table(rows)},
        "maps": {"raw_vs_scaled": [
            panel(raw.softmax(-1), names_q, names_k),
            panel((raw / math.sqrt(d_pic)).softmax(-1), names_q, names_k),
        ]},
    }


@cache
def self_attention() -> dict:
    x = inputs()
    torch.manual_seed(789)
    wq, wk, wv = (nn.Linear(3, 2, bias=False) for _ in range(3))
    with torch.no_grad():
        q, k, v = wq(x), wk(x), wv(x)
        w_self = torch.softmax(q @ k.T / math.sqrt(2), dim=-1)
        context = w_self @ v
        y = torch.randn(3, 3, generator=torch.Generator().manual_seed(7))
        w_cross = torch.softmax(wq(y) @ k.T / math.sqrt(2), dim=-1)
    targets = ("y1", "y2", "y3")
    return {
        "values": {"d_out": 2, "context_shape": str(tuple(context.shape)), "cross_shape": str(tuple(w_cross.shape)),
                   "self_shape": str(tuple(w_self.shape))},
        "tables": {"context": table(matrix_rows(TOKENS, context), ("c1", "c2"))},
        "maps": {"self_vs_cross": [panel(w_self, TOKENS, TOKENS), panel(w_cross, targets, TOKENS)]},
    }


@cache
def causal_mask() -> dict:
    x = inputs()
    t = len(TOKENS)
    scores = x @ x.T / math.sqrt(x.shape[1])
    blocked = causal_blocked(t)
    full = scores.softmax(-1)
    causal = scores.masked_fill(blocked, float("-inf")).softmax(-1)

    def first_row(fill):
        w = scores.masked_fill(blocked, fill).softmax(-1)[0]
        return [f4(w[1:].sum().item()), f4(w.sum().item())]

    after = full.masked_fill(blocked, 0.0)[0]
    fills = [
        ["s.masked_fill(m, float('-inf'))", *first_row(float("-inf"))],
        ["s.masked_fill(m, torch.finfo(s.dtype).min)", *first_row(torch.finfo(torch.float32).min)],
        ["s.masked_fill(m, -1e9)", *first_row(-1e9)],
        ["s.masked_fill(m, 0.0)", *first_row(0.0)],
        ["s.softmax(-1).masked_fill(m, 0.0)", f4(after[1:].sum().item()), f4(after.sum().item())],
    ]
    context_length = 8
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    try:
        scores.masked_fill(mask.bool(), float("-inf"))
        unsliced = ""
    except RuntimeError as err:
        unsliced = f"{type(err).__name__}: {str(err).splitlines()[0]}"
    return {
        "values": {"context_length": context_length, "t": t, "mask_shape": str(tuple(mask.shape)),
                   "sliced_shape": str(tuple(mask[:t, :t].shape)), "scores_shape": str(tuple(scores.shape)),
                   "leak": fills[3][1], "unsliced": unsliced},
        "tables": {"causal": table(matrix_rows(TOKENS, causal), TOKENS), "fills": table(fills, code=(0,))},
        "maps": {"full_vs_causal": [panel(full, TOKENS, TOKENS), panel(causal, TOKENS, TOKENS, blocked)]},
    }


@cache
def multi_head() -> dict:
    x = inputs()
    heads, head_dim = 4, 4
    g = torch.Generator().manual_seed(0)
    w_q = torch.randn(3, heads * head_dim, generator=g) * 1.5
    w_k = torch.randn(3, heads * head_dim, generator=g) * 1.5
    q = (x @ w_q).view(6, heads, head_dim).transpose(0, 1)
    k = (x @ w_k).view(6, heads, head_dim).transpose(0, 1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(head_dim), dim=-1)
    favourite = [TOKENS[i] for i in w.mean(1).argmax(-1).tolist()]
    d = 768
    rows = []
    for h in (1, 2, 4, 12):
        mha = nn.MultiheadAttention(d, h, bias=True, device="meta")
        n_params = sum(p.numel() for p in mha.parameters())
        rows.append([str(h), str(d // h), f"{n_params:,}", f"{h * (d // h):,}"])
    return {
        "values": {"heads": heads, "head_dim": head_dim, "d_out": heads * head_dim, "favourite": favourite,
                   "d": d},
        "tables": {"params": table(rows)},
        "maps": {"heads": [panel(w[h], TOKENS, TOKENS) for h in range(heads)]},
    }
