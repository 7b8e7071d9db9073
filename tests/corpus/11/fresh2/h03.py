# expect: pass
import math

import torch


def apply_rope(x, positions, base=10000.0):
    # Treat pair i = (x[i], x[i + d/2]) as the complex number x[i] + 1j * x[i + d/2]
    # and multiply it by exp(1j * angle): a rotation by +angle.
    d = x.size(-1)
    h = d // 2
    exponents = torch.arange(h, dtype=torch.float64, device=x.device) * (-2.0 / d)
    theta = torch.exp(exponents * math.log(base))
    ang = positions.double().to(x.device).unsqueeze(-1) * theta       # (T, h)
    rot = torch.polar(torch.ones_like(ang), ang)                      # complex128 (T, h)
    z = torch.complex(x[..., :h].double(), x[..., h:].double()) * rot
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
