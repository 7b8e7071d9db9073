# expect: rope_pairing
# bug-lines: 13, 15
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    assert d % 2 == 0, f"the feature size must be even, got {d}"
    half = d // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float64, device=x.device) * 2 / d)  # (d/2,): theta_i
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]  # (T, d/2): position × frequency
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, d/2), broadcast over batch and heads
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], half, 2).contiguous())  # Meta's Llama: interleaved pairs
    rot = torch.polar(torch.ones_like(angles), angles).to(xc.dtype)  # e^(i·angle)
    return torch.view_as_real(xc * rot).flatten(-2)
