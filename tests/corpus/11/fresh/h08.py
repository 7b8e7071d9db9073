# expect: rope_angle_precision
# bug-lines: 10,11
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    # build everything in the input's dtype so nothing needs casting afterwards
    theta = base ** (-torch.arange(0, d, 2, device=x.device, dtype=x.dtype) / d)
    angles = positions.to(device=x.device, dtype=x.dtype)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
