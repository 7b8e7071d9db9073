# expect: rope_positions_ignored
# held-out: computes the angles from torch.arange(T) (sequence index) instead of the positions argument.
# bug-lines: 11, 12
import torch


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    half = d // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float64, device=x.device) * 2 / d)
    pos = torch.arange(T, dtype=torch.float64, device=x.device)
    angles = pos[:, None] * inv_freq[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
