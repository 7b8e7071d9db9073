# expect: rope_frequencies
# held-out: theta = base ** (-i / d), dropping the factor 2 in the exponent.
# bug-lines: 11
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    idx = torch.arange(half, dtype=torch.float64, device=x.device)
    theta = base ** (-idx / d)
    angles = positions.double()[:, None] * theta[None, :]
    cos = torch.cos(angles).to(x.dtype)
    sin = torch.sin(angles).to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
