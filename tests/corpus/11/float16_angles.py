# expect: rope_angle_precision
# bug-lines: 9, 10
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float16) / d))
    angles = positions.to(torch.float16)[:, None] * inv_freq[None, :]  # half-precision angles to save memory
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
