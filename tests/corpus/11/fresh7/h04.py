# expect: rope_angle_precision
# bug-lines: 9
import torch


def apply_rope(x, positions, base=10000.0):
    head_dim = x.shape[-1]
    half = head_dim // 2
    pos = positions.to(x.dtype)
    freq = base ** (-2.0 * torch.arange(half, device=x.device, dtype=pos.dtype) / head_dim)
    angle = pos[:, None] * freq[None, :]
    cos = torch.cos(angle).to(x.dtype)
    sin = torch.sin(angle).to(x.dtype)

    x1 = x[..., :half]
    x2 = x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
