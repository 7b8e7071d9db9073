# expect: rope_frequencies
# bug-lines: 10
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    assert d % 2 == 0, f"the feature size must be even, got {d}"
    half = d // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float64, device=x.device) / d)
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]  # (T, d/2): position × frequency
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, d/2), broadcast over batch and heads
    x1, x2 = x[..., :half], x[..., half:]  # (..., T, d/2) each: pair i is (x1[i], x2[i])
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)  # each pair rotated by its angle
