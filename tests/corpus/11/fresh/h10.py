# expect: rope_frequencies
# also: dtype_not_kept
# bug-lines: 10,12
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = base ** (torch.arange(0, d, 2, device=x.device).float() / d)
    angle = positions.to(x.device).float().unsqueeze(1) * theta.unsqueeze(0)
    cos, sin = angle.cos(), angle.sin()
    x1, x2 = x[..., :h], x[..., h:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
