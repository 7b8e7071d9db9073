# expect: runtime_error
# bug-lines: 7
import torch


def apply_rope(x, positions, base=10000.0):
    B, H, T, d = x.shape
    half = d // 2
    i = torch.arange(half, device=x.device, dtype=torch.float64)
    theta = base ** (-2.0 * i / d)
    ang = positions.to(x.device).double().view(T, 1) * theta.view(1, half)
    cos = torch.cos(ang).to(x.dtype)
    sin = torch.sin(ang).to(x.dtype)
    x1 = x[..., :half]
    x2 = x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
