"""Live numbers for the online-softmax topic: a row of scores walked through block by block."""
from __future__ import annotations

import math
from functools import cache

import torch

from .live import TOKENS, f4, inputs, table

SCORES = [2.0, 1.0, 4.0, 0.5, 3.0, 6.0]  # one query's scores against the six tokens, maximum growing twice
BLOCK = 2


def vec(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{x:.4f}" for x in t.tolist()) + "]"


def short(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{x:g}" for x in t.tolist()) + "]"


def size(n_bytes: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.0f} {unit}"
    return f"{n_bytes:.0f} B"


@cache
def online_softmax() -> dict:
    s = torch.tensor(SCORES, dtype=torch.float64)
    v = inputs().double()  # the six token embeddings as values
    m = torch.tensor(float("-inf"), dtype=torch.float64)
    l = torch.tensor(0.0, dtype=torch.float64)
    acc = torch.zeros(v.size(-1), dtype=torch.float64)
    rows = []
    for b, j0 in enumerate(range(0, len(SCORES), BLOCK), start=1):
        sb, vb = s[j0 : j0 + BLOCK], v[j0 : j0 + BLOCK]
        m_new = torch.maximum(m, sb.max())
        corr = torch.exp(m - m_new)
        p = torch.exp(sb - m_new)
        l = l * corr + p.sum()
        acc = acc * corr + p @ vb
        m = m_new
        keys = ", ".join(TOKENS[j0 : j0 + BLOCK])
        rows.append([b, keys, short(sb), f"{m.item():.1f}", f4(corr.item()), f4(l.item()), vec(acc)])
    tiled = acc / l
    full = torch.softmax(s, dim=-1) @ v
    heads, T, blk = 16, 4096, 256
    return {
        "values": {
            "scores": short(s), "block": BLOCK,
            "tiled": vec(tiled), "full": vec(full), "diff": f"{(tiled - full).abs().max().item():.1e}",
            "l": f4(l.item()), "m": f"{m.item():.1f}", "lse": f4((m + torch.log(l)).item()),
            "lse_torch": f4(torch.logsumexp(s, dim=-1).item()),
            "heads": heads, "T": T, "blk": blk,
            "full_bytes": size(heads * T * T * 4), "block_bytes": size(heads * blk * blk * 4),
            "ratio": (T * T) // (blk * blk),
            "overflow": f"{torch.exp(torch.tensor(100.0)).item()}", "exp_limit": f"{math.log(torch.finfo(torch.float32).max):.1f}",
        },
        "tables": {"trace": table(rows, code=(2, 6))},
    }
