# expect: online_softmax_overflow
# bug-lines: 16, 27, 28, 29
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    inv = 1.0 / math.sqrt(d_k)
    rows = []
    for a in range(0, L, block_size):
        qa = query[:, :, a:a + block_size]
        na = qa.shape[-2]
        denom = qa.new_zeros(B, H, na, 1)
        numer = qa.new_zeros(B, H, na, value.shape[-1])
        for b in range(0, S, block_size):
            if causal and b >= a + na:
                break
            kb = key[:, :, b:b + block_size]
            s = (qa @ kb.transpose(-2, -1)) * inv
            if causal:
                qpos = torch.arange(a, a + na, device=qa.device).view(na, 1)
                kpos = torch.arange(b, b + kb.shape[-2], device=qa.device).view(1, -1)
                s = s.masked_fill(kpos > qpos, float("-inf"))
            e = torch.exp(s)
            denom = denom + e.sum(dim=-1, keepdim=True)
            numer = numer + e @ value[:, :, b:b + block_size]
        rows.append(numer / denom)
    return torch.cat(rows, dim=-2)
