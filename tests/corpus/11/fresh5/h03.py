# expect: rope_frequencies
# bug-lines: 9
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    exponents = torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / half
    theta = torch.pow(torch.tensor(base, dtype=torch.float64, device=x.device), -exponents)
    angle = positions.double()[:, None] * theta
    c = torch.cos(angle).to(x.dtype)
    s = torch.sin(angle).to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
