# expect: rope_positions_ignored
# bug-lines: 12
import math

import torch


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    half = d // 2
    freq = torch.exp(torch.arange(half, dtype=torch.float64, device=x.device) * (-2.0 * math.log(base) / d))
    pos = torch.arange(T, dtype=torch.float64, device=x.device)
    ang = pos[:, None] * freq[None, :]
    cos = torch.cos(ang).to(x.dtype)
    sin = torch.sin(ang).to(x.dtype)
    x1 = x[..., :half]
    x2 = x[..., half:]
    out1 = x1 * cos - x2 * sin
    out2 = x2 * cos + x1 * sin
    return torch.cat([out1, out2], dim=-1)
