# expect: rope_pairing
# held-out: RoFormer/Meta-style interleaved pairs (x[2i], x[2i+1]) rotated and re-interleaved, instead of the half-split layout.
# bug-lines: 12, 15
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d // 2, dtype=torch.float64, device=x.device) * 2 / d)
    ang = positions.to(torch.float64)[:, None] * theta[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    out_even = x_even * cos - x_odd * sin
    out_odd = x_odd * cos + x_even * sin
    return torch.stack([out_even, out_odd], dim=-1).flatten(-2)
