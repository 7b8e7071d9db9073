# expect: rope_base_ignored
# bug-lines: 10
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    exponent = torch.arange(half, device=x.device, dtype=torch.float32) * 2.0 / d
    theta = 10000.0 ** (-exponent)
    angles = positions.to(x.device).to(torch.float32).unsqueeze(-1) * theta
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
