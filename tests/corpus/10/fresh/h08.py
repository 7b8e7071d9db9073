# expect: scores_materialised
# bug-lines: 14
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.shape[2], key.shape[2]
    scale = 1.0 / math.sqrt(query.shape[-1])
    out = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        s = q @ key.transpose(-2, -1) * scale
        if causal:
            qi = torch.arange(i0, i0 + q.shape[2], device=q.device)[:, None]
            kj = torch.arange(S, device=q.device)[None, :]
            s = s.masked_fill(kj > qi, float("-inf"))
        out.append(torch.softmax(s, dim=-1) @ value)
    return torch.cat(out, dim=2)
