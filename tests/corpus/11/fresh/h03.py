# expect: rope_frequencies
# bug-lines: 10
import torch


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    half = d // 2
    idx = torch.arange(half, device=x.device, dtype=torch.float64)
    inv_freq = 1.0 / (base ** (idx / d))
    ang = torch.outer(positions.to(x.device, torch.float64), inv_freq)  # (T, d/2)
    c, s = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return torch.cat((a * c - b * s, b * c + a * s), dim=-1)
