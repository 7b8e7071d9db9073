# expect: rope_base_ignored
# also: rope_pairing
# bug-lines: 12, 15, 16, 19
import torch

BASE = 10000.0


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    exponent = torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / d
    inv_freq = BASE ** (-exponent)
    ang = positions.double()[:, None] * inv_freq[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    r1 = x1 * cos - x2 * sin
    r2 = x2 * cos + x1 * sin
    return torch.stack([r1, r2], dim=-1).flatten(-2)
