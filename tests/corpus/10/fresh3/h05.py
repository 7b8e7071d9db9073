# expect: online_softmax_overflow
# bug-lines: 26
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    """Blockwise attention: accumulate exp-sums block by block, divide at the end."""
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    d_v = value.shape[-1]
    pieces = []
    for start in range(0, L, block_size):
        stop = min(start + block_size, L)
        q = query[:, :, start:stop]
        denom = torch.zeros(B, H, stop - start, 1, dtype=query.dtype, device=query.device)
        numer = torch.zeros(B, H, stop - start, d_v, dtype=query.dtype, device=query.device)
        for kstart in range(0, S, block_size):
            kstop = min(kstart + block_size, S)
            s = q @ key[:, :, kstart:kstop].transpose(-2, -1) / math.sqrt(d_k)
            if causal:
                qpos = torch.arange(start, stop, device=query.device).view(-1, 1)
                kpos = torch.arange(kstart, kstop, device=query.device).view(1, -1)
                s = s.masked_fill(kpos > qpos, float("-inf"))
            e = torch.exp(s)
            denom = denom + e.sum(dim=-1, keepdim=True)
            numer = numer + e @ value[:, :, kstart:kstop]
        pieces.append(numer / denom)
    return torch.cat(pieces, dim=2)
