# expect: rope_positions_ignored
# bug-lines: 11
import math

import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    pos = (positions - positions.min()).to(torch.float32)
    freqs = torch.exp(-math.log(base) * torch.arange(half, dtype=torch.float32, device=x.device) * 2.0 / d)
    angles = pos.to(x.device)[:, None] * freqs[None, :]
    cos = torch.cos(angles).to(x.dtype)
    sin = torch.sin(angles).to(x.dtype)
    first, second = x.chunk(2, dim=-1)
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)
