# expect: rope_pairing
# bug-lines: 12,13,16
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32, device=x.device) / d)
    angles = positions.to(x.device).float()[:, None] * theta[None, :]
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x_even = x[..., 0::2]
    x_odd = x[..., 1::2]
    out_even = x_even * cos - x_odd * sin
    out_odd = x_odd * cos + x_even * sin
    return torch.stack([out_even, out_odd], dim=-1).flatten(-2)
