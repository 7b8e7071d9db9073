# expect: output_shape
# the rotation is right, but x is lifted to at least 3-D so that (1, T, d/2) tables broadcast, and never put back:
# a 2-D x (T, d) comes back as (1, T, d). Every value compared is right; only the shape breaks the contract.
# bug-lines: 11, 12
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    if x.dim() == 2:
        x = x.unsqueeze(0)
    theta = base ** (-torch.arange(half, dtype=torch.float64, device=x.device) * 2 / d)
    angles = (positions.to(device=x.device, dtype=torch.float64)[:, None] * theta[None, :]).unsqueeze(0)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
