# expect: rope_frequencies
# bug-lines: 12
import math

import torch


def apply_rope(x, positions, base=10000.0):
    """RoPE with the frequencies as exp(-ln(base) * exponent)."""
    d = x.shape[-1]
    half = d // 2
    exponent = torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / half
    freqs = torch.exp(exponent * -math.log(base))
    theta = torch.outer(positions.to(torch.float64), freqs)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    first, second = x[..., :half], x[..., half:]
    return torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)
