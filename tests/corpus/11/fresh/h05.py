# expect: rope_positions_ignored
# bug-lines: 10
import torch


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2:]
    half = d // 2
    theta = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
    pos = torch.arange(T, device=x.device, dtype=torch.float32)
    angles = pos[:, None] * theta[None, :]
    cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
    x1 = x[..., :half]
    x2 = x[..., half:]
    rotated_1 = x1 * cos - x2 * sin
    rotated_2 = x2 * cos + x1 * sin
    return torch.cat([rotated_1, rotated_2], dim=-1)
