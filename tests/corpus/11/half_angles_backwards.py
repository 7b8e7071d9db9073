# expect: rope_angle_precision
# also: rope_direction
# bug-lines: 10, 11, 14
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    inv_freq = base ** (-torch.arange(half, device=x.device).to(x.dtype) * 2 / d)
    angles = positions.to(x.dtype)[:, None] * inv_freq  # in the input's precision
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos + x2 * sin, x2 * cos - x1 * sin], dim=-1)
