# expect: rope_pairing
# bug-lines: 12, 15
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    i = torch.arange(d // 2, dtype=torch.float64, device=x.device)
    theta = base ** (-2.0 * i / d)
    ang = positions.to(torch.float64)[:, None] * theta[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    pairs = x.unflatten(-1, (d // 2, 2))
    a, b = pairs[..., 0], pairs[..., 1]
    out = torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1)
    return out.flatten(-2)
