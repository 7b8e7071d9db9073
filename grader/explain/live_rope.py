"""Live numbers for the RoPE topic: dot products at equal offsets, wavelengths, float32 angle error."""
from __future__ import annotations

import math
from functools import cache

import torch

from .live import table

D = 8


def rotate(x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    half = x.size(-1) // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) * 2 / x.size(-1))
    ang = pos.double()[:, None] * theta
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * ang.cos() - x2 * ang.sin(), x2 * ang.cos() + x1 * ang.sin()], dim=-1)


@cache
def rope() -> dict:
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(D, generator=g, dtype=torch.float64), torch.randn(D, generator=g, dtype=torch.float64)
    pairs = [(0, 0), (7, 7), (1000, 1000), (3, 0), (10, 7), (1003, 1000), (0, 3), (7, 10)]
    rows = []
    for m, n in pairs:
        rq = rotate(q[None], torch.tensor([m]))[0]
        rk = rotate(k[None], torch.tensor([n]))[0]
        rows.append([m, n, m - n, f"{(rq @ rk).item():.4f}"])
    theta = 10000.0 ** (-torch.arange(D // 2, dtype=torch.float64) * 2 / D)
    waves = [[i, f"{t:.6g}", f"{2 * math.pi / t:,.1f}"] for i, t in enumerate(theta.tolist())]
    pos = 3000
    f32 = (torch.tensor(float(pos), dtype=torch.float32) * theta.float()[0]).double().cos()
    err = abs(f32.item() - math.cos(pos * theta[0].item()))
    return {
        "values": {"d": D, "plain": f"{(q @ k).item():.4f}", "pos": pos, "f32_err": f"{err:.1e}",
                   "longest": f"{2 * math.pi * 10000:,.0f}"},
        "tables": {"offsets": table(rows), "waves": table(waves)},
    }
