# expect: rope_pairing
# bug-lines: 13, 14, 17
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    idx = torch.arange(0, d // 2, dtype=torch.float32, device=x.device)
    theta = torch.pow(base, -2 * idx / d)
    ang = positions.float().to(x.device).unsqueeze(-1) * theta
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)

    x_even = x[..., 0::2]
    x_odd = x[..., 1::2]
    r_even = x_even * cos - x_odd * sin
    r_odd = x_odd * cos + x_even * sin
    return torch.stack((r_even, r_odd), dim=-1).flatten(-2)
