# expect: pass
# held-out: correct; treats each half-split pair as a complex number x1 + i*x2 and multiplies by torch.polar(1, angle) in float64, then casts back.
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    i = torch.arange(half, dtype=torch.float64, device=x.device)
    theta = base ** (-2.0 * i / d)
    angles = positions.to(device=x.device, dtype=torch.float64).unsqueeze(-1) * theta
    rot = torch.polar(torch.ones_like(angles), angles)
    xd = x.to(torch.float64)
    z = torch.complex(xd[..., :half], xd[..., half:]) * rot
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
