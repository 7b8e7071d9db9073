# expect: rope_pairing
# bug-lines: 15, 16, 19
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    idx = torch.arange(0, d, 2, device=x.device, dtype=work)
    theta = base ** (-idx / d)
    ang = positions.to(work)[:, None] * theta[None, :]
    cos = ang.cos().to(x.dtype)
    sin = ang.sin().to(x.dtype)

    x_even = x[..., 0::2]
    x_odd = x[..., 1::2]
    r_even = x_even * cos - x_odd * sin
    r_odd = x_odd * cos + x_even * sin
    return torch.stack((r_even, r_odd), dim=-1).flatten(-2)
