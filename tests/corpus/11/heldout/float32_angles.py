# expect: pass
# relabelled pass by the integrator: issue 12 makes float32 angles correct (only float16/bfloat16 angles are rope_angle_precision); the file is unchanged
# held-out: frequencies and angles in float32 (positions.float(), default-dtype arange), then cast to x's dtype; large positions drift.
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device).float() / d))
    angles = positions.float()[:, None] * inv_freq[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
