# expect: rope_positions_ignored
# bug-lines: 16
import torch


def apply_rope(x, positions, base=10000.0):
    # x: (..., T, d), d even
    T, d = x.shape[-2], x.shape[-1]
    half = d // 2

    # one frequency per pair
    idx = torch.arange(half, dtype=torch.float64, device=x.device)
    theta = 1.0 / (base ** (2 * idx / d))

    # one angle per (token, pair)
    pos = torch.arange(T, dtype=torch.float64, device=x.device)
    angles = torch.outer(pos, theta)

    cos = torch.cos(angles).to(x.dtype)
    sin = torch.sin(angles).to(x.dtype)

    x1 = x[..., :half]
    x2 = x[..., half:]
    out1 = x1 * cos - x2 * sin
    out2 = x2 * cos + x1 * sin
    return torch.cat([out1, out2], dim=-1)
