# expect: rope_frequencies
# bug-lines: 9
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    inv_freq = base ** (-torch.arange(half, dtype=torch.float64, device=x.device) / d)  # exponent i/d, not 2i/d
    angles = torch.outer(positions.to(device=x.device, dtype=torch.float64), inv_freq)
    # cos/sin tables kept in bfloat16 to save memory, as some models do
    cos = angles.cos().to(torch.bfloat16).to(x.dtype)
    sin = angles.sin().to(torch.bfloat16).to(x.dtype)
    lo, hi = x.chunk(2, dim=-1)
    return torch.cat((lo * cos - hi * sin, hi * cos + lo * sin), dim=-1)
