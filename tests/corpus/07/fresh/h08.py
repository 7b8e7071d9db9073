# expect: padding_mask_on_queries
# bug-lines: 16
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    L, S = scores.shape[-2:]
    blocked = torch.zeros(L, S, dtype=torch.bool, device=scores.device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=scores.device).triu(1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, :, None]
    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(blocked, 0.0)
    return weights @ value
