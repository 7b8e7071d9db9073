# expect: scores_materialised
# bug-lines: 15, 20
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    # blocks of queries against all keys: (B, H, block_size, S) scores at a time, an ordinary softmax per block
    # (bounded memory, but not tiled: the suite records the largest tensor and refuses the strip)
    L, S = query.size(-2), key.size(-2)
    out = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0 : i0 + block_size]  # (B, H, bq, d_k)
        att = q @ key.transpose(-2, -1) / math.sqrt(query.size(-1))  # (B, H, bq, S)
        if causal:
            qi = torch.arange(i0, i0 + q.size(-2), device=query.device)[:, None]
            kj = torch.arange(S, device=query.device)[None, :]
            att = att.masked_fill(kj > qi, float("-inf"))
        out.append(torch.softmax(att, dim=-1) @ value)  # (B, H, bq, d_v)
    return torch.cat(out, dim=2)
