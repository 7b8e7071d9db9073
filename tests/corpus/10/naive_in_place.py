# expect: scores_materialised
# bug-lines: 10
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.size(-2), key.size(-2)
    att = query @ key.transpose(-2, -1)  # (B, H, L, S), one copy only: everything below is in place
    att.mul_(1.0 / math.sqrt(query.size(-1)))
    if causal:
        att.masked_fill_(torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1), float("-inf"))
    att.sub_(att.amax(dim=-1, keepdim=True)).exp_()
    att.div_(att.sum(dim=-1, keepdim=True))
    return att @ value
