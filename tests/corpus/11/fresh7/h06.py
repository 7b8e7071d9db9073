# expect: rope_frequencies
# bug-lines: 8
import torch


def _inv_freq(dim, base, device):
    steps = torch.arange(dim // 2, device=device, dtype=torch.float64)
    return base ** (-steps / dim)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    inv_freq = _inv_freq(dim, base, x.device)
    angles = positions.to(device=x.device, dtype=torch.float64)[:, None] * inv_freq
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1, x2 = x.split(dim // 2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
