# expect: rope_direction
# bug-lines: 16, 17
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    exps = torch.arange(0, h, device=x.device, dtype=torch.float64) * 2.0 / d
    theta = torch.pow(torch.tensor(base, dtype=torch.float64, device=x.device), -exps)
    ang = positions.to(x.device).double().unsqueeze(-1) * theta
    c, s = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    a, b = x.split(h, dim=-1)
    return torch.cat(
        [
            a * c + b * s,
            b * c - a * s,
        ],
        dim=-1,
    )
