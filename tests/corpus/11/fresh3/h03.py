# expect: rope_frequencies
# bug-lines: 15
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    idx = torch.arange(0, dim // 2, dtype=torch.float32, device=x.device)
    inv_freq = base ** (-idx / dim)
    freqs = positions.to(x.device, torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(x.dtype)
    sin = emb.sin().to(x.dtype)
    return x * cos + rotate_half(x) * sin
