# expect: rope_frequencies
# also: rope_direction
# two mistakes along the data flow: the frequencies (exponent not negated) come before the rotation that applies them
# (rotated by -angle); the first step that goes wrong is named first.
# bug-lines: 12, 18
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    freqs = base ** (torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)
    angles = torch.outer(positions.to(torch.float64), freqs)
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1 = x[..., :half]
    x2 = x[..., half:]
    return torch.cat((x1 * cos + x2 * sin, x2 * cos - x1 * sin), dim=-1)
