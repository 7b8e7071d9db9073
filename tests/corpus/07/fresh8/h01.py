# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)

    blocked = torch.zeros(B, 1, L, S, dtype=torch.bool, device=query.device)
    if causal:
        future = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
        blocked = blocked | future
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(B, 1, 1, S)

    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(blocked, 0.0)
    return weights @ value
