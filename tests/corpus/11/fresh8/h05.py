# expect: rope_angle_precision
# bug-lines: 9, 11, 12
import torch


def apply_rope(x, positions, base=10000.0):
    *_, T, d = x.shape
    half = d // 2
    exponent = torch.arange(half, device=x.device).to(x.dtype) * (2.0 / d)
    theta = torch.full_like(exponent, base) ** (-exponent)
    angles = positions.to(device=x.device, dtype=x.dtype).unsqueeze(1) * theta.unsqueeze(0)
    c, s = torch.cos(angles), torch.sin(angles)
    a, b = x.split(half, dim=-1)
    return torch.cat((a * c - b * s, b * c + a * s), dim=-1)
