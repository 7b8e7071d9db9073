# expect: rope_angle_precision
# bug-lines: 9, 11
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    # everything in x's dtype so the result needs no cast
    i = torch.arange(d // 2, device=x.device).to(x.dtype)
    theta = base ** (-2 * i / d)
    angles = positions.to(x.device, x.dtype)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
