# expect: scores_materialised
# bug-lines: 10, 14
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.size(-2), key.size(-2)
    att = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))  # (B, H, L, S): the whole matrix at once
    if causal:
        future = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
        att = att.masked_fill(future, float("-inf"))
    return torch.softmax(att, dim=-1) @ value  # (B, H, L, d_v)
