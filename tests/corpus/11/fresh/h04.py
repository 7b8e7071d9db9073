# expect: rope_direction
# bug-lines: 8
import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x2, -x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device, dtype=torch.float32) / dim))
    freqs = positions.to(x.device).float()[:, None] * inv_freq[None, :]  # (T, dim/2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (T, dim)
    cos = emb.cos().to(x.dtype)
    sin = emb.sin().to(x.dtype)
    return x * cos + rotate_half(x) * sin
