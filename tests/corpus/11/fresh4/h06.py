# expect: rope_base_ignored
# also: dtype_not_kept
# bug-lines: 9, 16
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = 1.0 / (10000.0 ** (torch.arange(0, d, 2, device=x.device).float() / d))
    angles = positions.to(x.device).float().unsqueeze(-1) * theta
    cos = torch.cos(angles)
    sin = torch.sin(angles)
    x1 = x[..., : d // 2]
    x2 = x[..., d // 2 :]
    out = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    return out
