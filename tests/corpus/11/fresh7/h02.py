# expect: pass
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    exponent = torch.arange(half, dtype=torch.float64, device=x.device) * (2.0 / d)
    theta = torch.pow(torch.tensor(float(base), dtype=torch.float64, device=x.device), -exponent)
    angles = positions.to(device=x.device, dtype=torch.float64).unsqueeze(-1) * theta
    rotation = torch.polar(torch.ones_like(angles), angles)  # e^{i * angle}, (T, d/2)

    pairs = torch.complex(x[..., :half].to(torch.float64), x[..., half:].to(torch.float64))
    turned = pairs * rotation
    out = torch.cat([turned.real, turned.imag], dim=-1)
    return out.to(x.dtype)
