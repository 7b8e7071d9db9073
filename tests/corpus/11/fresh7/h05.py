# expect: runtime_error
# also: rope_direction
# bug-lines: 17, 18
import torch


def rope_rotations(positions, dim, base, device):
    """e^{i * position * theta_j} as a (T, dim // 2) complex tensor."""
    theta = 1.0 / (base ** (torch.arange(0, dim, 2, device=device, dtype=torch.float64) / dim))
    angles = torch.outer(positions.to(device=device, dtype=torch.float64), theta)
    return torch.polar(torch.ones_like(angles), angles)


def apply_rope(x, positions, base=10000.0):
    half = x.shape[-1] // 2
    rot = rope_rotations(positions, x.shape[-1], base, x.device)
    z = torch.complex(x[..., :half], x[..., half:])
    z = z * rot.conj()
    out = torch.cat((z.real, z.imag), dim=-1)
    return out.to(x.dtype)
