# expect: pass
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    i = torch.arange(half, device=x.device, dtype=torch.float64)
    theta = base ** (-2.0 * i / d)                                      # (d/2,)
    angles = positions.to(device=x.device, dtype=torch.float64)[:, None] * theta[None, :]   # (T, d/2)
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
