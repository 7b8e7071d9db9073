# expect: pass
import torch


def apply_rope(x, positions, base=10000.0):
    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    d = x.size(-1)
    half = d // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float64).to(device) * 2 / d)
    angles = positions.to(device=device, dtype=torch.float64)[:, None] * inv_freq
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
