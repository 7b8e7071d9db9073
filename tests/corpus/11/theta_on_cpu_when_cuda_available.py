# expect: tensor_on_cpu
# bug-lines: 10
import torch


def apply_rope(x, positions, base=10000.0):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, positions = x.to(device), positions.to(device)
    d, half = x.size(-1), x.size(-1) // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float64) * 2 / d)  # on the CPU whatever device was picked
    angles = positions.to(torch.float64)[:, None] * inv_freq
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
