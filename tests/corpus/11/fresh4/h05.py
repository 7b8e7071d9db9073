# expect: rope_positions_ignored
# bug-lines: 10
import torch


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    half = d // 2
    theta = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)
    pos = torch.arange(T, dtype=torch.float64, device=x.device)
    angles = torch.einsum("t,f->tf", pos, theta)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    rotated_1 = x1 * cos - x2 * sin
    rotated_2 = x2 * cos + x1 * sin
    return torch.cat((rotated_1, rotated_2), dim=-1)
