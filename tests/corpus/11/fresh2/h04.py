# expect: rope_pairing
# bug-lines: 12, 13, 16
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)   # (d/2,)
    angles = positions.to(x.device).float()[:, None] * theta[None, :]                   # (T, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    # pairs (x0, x1), (x2, x3), ...
    x_even = x[..., 0::2]
    x_odd = x[..., 1::2]
    out_even = x_even * cos - x_odd * sin
    out_odd = x_odd * cos + x_even * sin
    return torch.stack([out_even, out_odd], dim=-1).flatten(-2)
