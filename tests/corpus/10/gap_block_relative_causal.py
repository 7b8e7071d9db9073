# expect: tiled_causal_diagonal
# bug-lines: 25
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, D = query.shape
    S = key.shape[-2]
    out = torch.empty(B, H, L, value.shape[-1], dtype=query.dtype, device=query.device)
    for qs in range(0, L, block_size):
        qb = query[:, :, qs:qs + block_size]
        n = qb.shape[-2]
        row_max = torch.full((B, H, n, 1), -math.inf, dtype=query.dtype, device=query.device)
        denom = torch.zeros(B, H, n, 1, dtype=query.dtype, device=query.device)
        acc = torch.zeros(B, H, n, value.shape[-1], dtype=query.dtype, device=query.device)
        for ks in range(0, S, block_size):
            if causal and ks > qs + n - 1:
                break
            kb, vb = key[:, :, ks:ks + block_size], value[:, :, ks:ks + block_size]
            s = qb @ kb.transpose(-2, -1) / math.sqrt(D)
            if causal:
                # positions inside the tile, not in the whole sequence
                local = torch.ones(n, kb.shape[-2], dtype=torch.bool, device=query.device).triu(1)
                s = s.masked_fill(local, -math.inf)
            new_max = torch.maximum(row_max, s.max(dim=-1, keepdim=True).values)
            p = torch.exp(s - new_max)
            c = torch.exp(row_max - new_max)
            denom = denom * c + p.sum(-1, keepdim=True)
            acc = acc * c + p @ vb
            row_max = new_max
        out[:, :, qs:qs + n] = acc / denom
    return out
