# expect: mask_combine_wrong
# bug-lines: 21
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)

    causal_mask = None
    if causal:
        causal_mask = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), 1)
    pad_mask = None
    if key_padding_mask is not None:
        pad_mask = key_padding_mask.view(B, 1, 1, S)

    if causal_mask is not None and pad_mask is not None:
        blocked = causal_mask & pad_mask
    elif causal_mask is not None:
        blocked = causal_mask
    else:
        blocked = pad_mask

    if blocked is not None:
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if blocked is not None:
        weights = weights.masked_fill(blocked, 0.0)
    return weights @ value
