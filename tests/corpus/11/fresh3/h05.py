# expect: rope_positions_ignored
# bug-lines: 10
import torch


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    half = d // 2
    theta = 1.0 / base ** (torch.arange(half, device=x.device, dtype=torch.float32) * 2 / d)
    pos = torch.arange(T, device=x.device, dtype=torch.float32)
    angles = torch.einsum("t,f->tf", pos, theta)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    out1 = x1 * cos - x2 * sin
    out2 = x2 * cos + x1 * sin
    return torch.cat((out1, out2), dim=-1)
