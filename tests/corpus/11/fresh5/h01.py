# expect: pass
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32, device=x.device) / d))
    angles = torch.outer(positions.to(device=x.device, dtype=torch.float32), inv_freq)
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1 = x[..., :half]
    x2 = x[..., half:]
    rotated = torch.cat((-x2, x1), dim=-1)
    return x * torch.cat((cos, cos), dim=-1) + rotated * torch.cat((sin, sin), dim=-1)
