# expect: runtime_error
# bug-lines: 13
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, half, dtype=torch.float64, device=x.device) * 2 / d))
    angles = positions.to(device=x.device, dtype=torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    cos, sin = cos[None, None], sin[None, None]  # (1, 1, T, half)
    x1, x2 = x.unflatten(3, (2, half)).unbind(3)  # the feature axis taken as dim 3: only 4-D input has it
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
