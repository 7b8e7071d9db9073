# expect: scores_materialised
# bug-lines: 14
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.shape[-2], key.shape[-2]
    d_k = query.shape[-1]
    out_blocks = []
    for start in range(0, L, block_size):
        q = query[:, :, start:start + block_size]
        s = q @ key.transpose(-2, -1) / math.sqrt(d_k)
        if causal:
            rows = torch.arange(start, start + q.shape[2], device=q.device)[:, None]
            cols = torch.arange(S, device=q.device)[None, :]
            s = s.masked_fill(cols > rows, float("-inf"))
        m = s.amax(dim=-1, keepdim=True)
        p = torch.exp(s - m)
        out_blocks.append((p @ value) / p.sum(dim=-1, keepdim=True))
    return torch.cat(out_blocks, dim=2)
