# expect: rope_direction
# bug-lines: 18, 19
import torch


def _cos_sin(positions, d, base, device, dtype):
    freqs = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64, device=device) / d))
    t = positions.to(device=device, dtype=torch.float64)
    ang = torch.einsum("t,f->tf", t, freqs)
    return ang.cos().to(dtype), ang.sin().to(dtype)


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    cos, sin = _cos_sin(positions, d, base, x.device, x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    # rotation matrix [[cos, sin], [-sin, cos]] applied to (x1, x2)
    r1 = x1 * cos + x2 * sin
    r2 = -x1 * sin + x2 * cos
    return torch.cat([r1, r2], dim=-1)
