# expect: rope_pairing
# bug-lines: 12, 15
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device).float() / d))
    freqs = torch.outer(positions.to(x.device).float(), inv_freq)  # (T, d/2)
    cos, sin = freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
    # pair neighbouring features (x0, x1), (x2, x3), ... as in the original RoFormer
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    rot_even = x_even * cos - x_odd * sin
    rot_odd = x_odd * cos + x_even * sin
    return torch.stack((rot_even, rot_odd), dim=-1).flatten(-2)
