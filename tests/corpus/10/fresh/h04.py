# expect: online_softmax_overflow
# bug-lines: 27
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    d_v = value.shape[3]
    scale = d_k ** -0.5
    out = []
    for i0 in range(0, L, block_size):
        i1 = min(i0 + block_size, L)
        q = query[:, :, i0:i1]
        denom = torch.zeros(B, H, i1 - i0, 1, dtype=query.dtype, device=query.device)
        numer = torch.zeros(B, H, i1 - i0, d_v, dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            j1 = min(j0 + block_size, S)
            s = q @ key[:, :, j0:j1].transpose(-2, -1) * scale
            if causal:
                qpos = torch.arange(i0, i1, device=q.device)[:, None]
                kpos = torch.arange(j0, j1, device=q.device)[None, :]
                s = s.masked_fill(kpos > qpos, float("-inf"))
            # exp(-inf) = 0, so masked keys drop out of both sums
            p = torch.exp(s)
            denom = denom + p.sum(-1, keepdim=True)
            numer = numer + p @ value[:, :, j0:j1]
        out.append(numer / denom)
    return torch.cat(out, dim=2)
