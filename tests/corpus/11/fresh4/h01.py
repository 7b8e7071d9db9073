# expect: pass
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    theta = base ** (-torch.arange(0, half, dtype=torch.float64, device=x.device) * 2 / d)
    angles = positions.to(device=x.device, dtype=torch.float64)[:, None] * theta[None, :]
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
