# expect: rope_base_ignored
# bug-lines: 10, 17
import torch

ROPE_THETA = 10000.0


def build_rope_cache(positions, head_dim, device):
    exponent = torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim
    inv_freq = 1.0 / (ROPE_THETA ** exponent)
    angles = positions.to(device=device, dtype=torch.float32)[:, None] * inv_freq
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, positions, base=10000.0):
    head_dim = x.size(-1)
    cos, sin = build_rope_cache(positions, head_dim, x.device)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
