# expect: rope_direction
# bug-lines: 15, 16
import torch


def apply_rope(x, positions, base=10000.0):
    *_, T, d = x.shape
    h = d // 2
    exponents = torch.arange(h, device=x.device, dtype=torch.float64) * 2 / d
    theta = torch.pow(torch.tensor(base, dtype=torch.float64, device=x.device), -exponents)
    ang = positions.double().to(x.device).unsqueeze(-1) * theta
    c = torch.cos(ang).to(x.dtype)
    s = torch.sin(ang).to(x.dtype)
    a, b = x[..., :h], x[..., h:]
    first = a * c + b * s
    second = b * c - a * s
    return torch.cat((first, second), dim=-1)
