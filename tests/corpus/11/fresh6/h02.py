# expect: pass
import torch


def rotate_half(x):
    """(x1, x2) -> (-x2, x1) on the two halves of the last dimension."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rope_cos_sin(positions, dim, base, device, dtype):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=device, dtype=torch.float64) / dim))
    freqs = torch.outer(positions.to(device=device, dtype=torch.float64), inv_freq)  # (T, dim/2)
    emb = torch.cat((freqs, freqs), dim=-1)                                          # (T, dim)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x, positions, base=10000.0):
    cos, sin = rope_cos_sin(positions, x.shape[-1], base, x.device, x.dtype)
    return x * cos + rotate_half(x) * sin
