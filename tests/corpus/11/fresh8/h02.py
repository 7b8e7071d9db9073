# expect: pass
"""RoPE as a complex multiplication: (x1 + i*x2) * exp(i*angle), half-split layout."""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / d))
    freqs = torch.outer(positions.to(x.device).double(), inv_freq)          # (T, d/2)
    rot = torch.polar(torch.ones_like(freqs), freqs)                         # complex128
    xd = x.double()
    z = torch.complex(xd[..., : d // 2].contiguous(), xd[..., d // 2:].contiguous()) * rot
    return torch.cat((z.real, z.imag), dim=-1).to(x.dtype)
