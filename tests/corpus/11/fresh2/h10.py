# expect: tensor_on_cpu
# bug-lines: 11
import math

import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    theta = torch.exp(-math.log(base) * torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions.double()[:, None] * theta[None, :]
    cos = torch.cos(angles).to(x.dtype)
    sin = torch.sin(angles).to(x.dtype)
    first, second = x[..., :half], x[..., half:]
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)
