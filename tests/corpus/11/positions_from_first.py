# expect: rope_positions_ignored
# bug-lines: 14, 15
import torch


def rotate_half(t):
    t1, t2 = t.chunk(2, dim=-1)
    return torch.cat([-t2, t1], dim=-1)


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32, device=x.device) / d))
    start = positions[0]
    pos = (positions - start).to(torch.float32)  # relative to the first token
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return x * emb.cos().to(x.dtype) + rotate_half(x) * emb.sin().to(x.dtype)
