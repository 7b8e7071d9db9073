# expect: scores_materialised
# bug-lines: 13, 15, 20, 21
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    # tile over the queries: each block of queries sees all keys at once
    B, H, L, d_k = query.shape
    S = key.shape[2]
    out = []
    for start in range(0, L, block_size):
        q = query[:, :, start:start + block_size]
        s = q @ key.transpose(-2, -1) / math.sqrt(d_k)           # (B, H, bq, S)
        if causal:
            qi = torch.arange(start, start + q.shape[2], device=q.device)[:, None]
            kj = torch.arange(S, device=q.device)[None, :]
            s = s.masked_fill(kj > qi, float("-inf"))
        w = torch.softmax(s, dim=-1)
        out.append(w @ value)
    return torch.cat(out, dim=2)
