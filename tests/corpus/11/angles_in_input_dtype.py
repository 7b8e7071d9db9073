# expect: rope_angle_precision
# from the fresh held-out round of issue 21 (moved to dev once the grader was fixed for it): positions and frequencies are cast to x's dtype before multiplying, so float16/bfloat16 angles at large positions are off by whole radians.
# bug-lines: 11,12
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    freq = 1.0 / base ** (torch.arange(half, device=x.device, dtype=torch.float32) * 2.0 / d)
    freq = freq.to(x.dtype)
    theta = positions.to(device=x.device, dtype=x.dtype)[:, None] * freq
    cos = torch.cos(theta)
    sin = torch.sin(theta)
    x1 = x[..., :half]
    x2 = x[..., half:]
    rot_first = x1 * cos - x2 * sin
    rot_second = x1 * sin + x2 * cos
    return torch.cat((rot_first, rot_second), dim=-1)
