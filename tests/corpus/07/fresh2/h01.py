# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)          # (B, H, L, S)

    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
    blocked = blocked.view(1, 1, L, S)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(B, 1, 1, S)         # (B, 1, L, S)

    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(blocked, 0.0)                         # rows with no key -> all 0
    return weights @ value
