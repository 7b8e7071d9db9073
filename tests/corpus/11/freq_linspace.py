# expect: rope_frequencies
# bug-lines: 9
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    inv_freq = base ** -torch.linspace(0, 1, half, dtype=torch.float64, device=x.device)  # exponents 0..1 in d/2 steps
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
