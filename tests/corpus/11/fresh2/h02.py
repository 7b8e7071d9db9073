# expect: pass
"""RoPE the Hugging Face way: duplicate the angles to full width and use rotate_half."""
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64, device=x.device).float() / dim))
    freqs = torch.outer(positions.to(x.device).float(), inv_freq)   # (T, d/2)
    emb = torch.cat((freqs, freqs), dim=-1)                          # (T, d)
    cos = emb.cos().to(x.dtype)
    sin = emb.sin().to(x.dtype)
    return (x * cos) + (rotate_half(x) * sin)
