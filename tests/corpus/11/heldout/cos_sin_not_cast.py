# expect: dtype_not_kept
# held-out: computes cos/sin in float64 as asked but never casts them to x.dtype, so a float32 x comes back as float64.
# bug-lines: 12
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float64, device=x.device) * 2 / d)
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
