# expect: runtime_error
# bug-lines: 7
import torch


def apply_rope(x, positions, base=10000.0):
    n_feat = x.size(3)
    half = n_feat // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64, device=x.device) * 2 / n_feat)
    angles = positions.to(device=x.device, dtype=torch.float64).unsqueeze(-1) * theta
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1 = x[..., :half]
    x2 = x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
