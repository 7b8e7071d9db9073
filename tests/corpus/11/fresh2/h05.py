# expect: rope_frequencies
# also: rope_direction
# bug-lines: 11, 15
import torch


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    half = d // 2
    idx = torch.arange(half, dtype=torch.float32, device=x.device)
    theta = base ** (-idx / d)
    angle = positions.float().to(x.device).view(T, 1) * theta.view(1, half)
    c, s = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return torch.cat((a * c + b * s, b * c - a * s), dim=-1)
