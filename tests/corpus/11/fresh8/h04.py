# expect: rope_frequencies
# also: dtype_not_kept
# bug-lines: 14, 17
import torch


def rotate_half(t):
    h = t.shape[-1] // 2
    return torch.cat((-t[..., h:], t[..., :h]), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim // 2, dtype=torch.float32, device=x.device) / dim))
    freqs = positions.to(torch.float32).to(x.device)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    return x * cos + rotate_half(x) * sin
