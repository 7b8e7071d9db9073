# expect: rope_angle_precision
# bug-lines: 14
import torch


def _rotation(positions, d, base, dtype, device):
    freqs = base ** (-torch.arange(0, d, 2, device=device, dtype=dtype) / d)
    angles = positions.to(device=device, dtype=dtype)[:, None] * freqs
    return angles.cos(), angles.sin()


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    cos, sin = _rotation(positions, d, base, x.dtype, x.device)
    x1 = x[..., : d // 2]
    x2 = x[..., d // 2 :]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
