# expect: rope_angle_precision
# also: rope_direction
# bug-lines: 9, 14, 16
import torch


def _rotate_half(t):
    a, b = t.chunk(2, dim=-1)
    return torch.cat((b, -a), dim=-1)


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    idx = torch.arange(0, d, 2, device=x.device).to(x.dtype)
    inv_freq = 1.0 / (base ** (idx / d))
    freqs = positions.to(x.device, x.dtype)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + _rotate_half(x) * emb.sin()
