# expect: rope_pairing
# bug-lines: 11, 12, 15
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
    freqs = torch.outer(positions.to(x.device).float(), inv_freq)
    cos, sin = freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
    x_even = x[..., 0::2]
    x_odd = x[..., 1::2]
    out_even = x_even * cos - x_odd * sin
    out_odd = x_odd * cos + x_even * sin
    return torch.stack([out_even, out_odd], dim=-1).flatten(-2)
