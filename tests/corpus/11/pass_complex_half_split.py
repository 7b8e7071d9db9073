# expect: pass
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    assert d % 2 == 0, f"the feature size must be even, got {d}"
    half = d // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float64, device=x.device) * 2 / d)  # (d/2,): theta_i
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]  # (T, d/2): position × frequency
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, d/2), broadcast over batch and heads
    xc = torch.complex(x[..., :half], x[..., half:]) if x.dtype != torch.float16 else None  # pair i as x1 + i·x2
    out = xc * torch.polar(torch.ones_like(angles), angles).to(xc.dtype)
    return torch.cat([out.real, out.imag], dim=-1).to(x.dtype)
