# expect: pass
import math

import torch

LOG2E = 1.4426950408889634


def tiled_attention(query, key, value, causal=False, block_size=64):
    # FlashAttention-2 style: scores in base 2 (exp2), statistics kept without the trailing 1 axis.
    B, H, L, D = query.shape
    S = key.size(2)
    Dv = value.size(3)
    c = LOG2E / math.sqrt(D)
    rows = []
    i = 0
    while i < L:
        q = query[:, :, i:i + block_size]
        n = q.size(2)
        row_max = query.new_full((B, H, n), -float("inf"))
        row_sum = query.new_zeros((B, H, n))
        o = query.new_zeros((B, H, n, Dv))
        j = 0
        while j < S:
            if causal and j >= i + n:
                break
            k = key[:, :, j:j + block_size]
            v = value[:, :, j:j + block_size]
            s2 = torch.einsum("bhqd,bhkd->bhqk", q, k) * c
            if causal and j + k.size(2) - 1 > i:
                qpos = torch.arange(i, i + n, device=query.device).view(n, 1)
                kpos = torch.arange(j, j + k.size(2), device=query.device).view(1, -1)
                s2 = s2.masked_fill(kpos > qpos, -float("inf"))
            new_max = torch.maximum(row_max, s2.amax(-1))
            p = torch.exp2(s2 - new_max.unsqueeze(-1))
            rescale = torch.exp2(row_max - new_max)
            row_sum = row_sum * rescale + p.sum(-1)
            o = o * rescale.unsqueeze(-1) + torch.einsum("bhqk,bhkd->bhqd", p, v)
            row_max = new_max
            j += block_size
        rows.append(o / row_sum.unsqueeze(-1))
        i += block_size
    return torch.cat(rows, dim=2)
