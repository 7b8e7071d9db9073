# expect: pass
import torch


def rotate_half(x):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((-x2, x1), dim=-1)


def rope_cos_sin(positions, dim, base, device, dtype):
    """cos and sin tables (T, dim), the d/2 angles of each token repeated for both halves."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=device, dtype=dtype) / dim))
    freqs = torch.outer(positions.to(device=device, dtype=dtype), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, positions, base=10000.0):
    angle_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = rope_cos_sin(positions, x.shape[-1], base, x.device, angle_dtype)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return x * cos + rotate_half(x) * sin
