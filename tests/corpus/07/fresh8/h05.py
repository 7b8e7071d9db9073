# expect: mask_combine_wrong
# bug-lines: 18
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    scores = query.matmul(key.transpose(-1, -2)).div(math.sqrt(d_k))

    blocked = None
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1).view(1, 1, L, S)
    if key_padding_mask is not None:
        pad = key_padding_mask.view(B, 1, 1, S)
        blocked = pad if blocked is None else blocked & pad

    if blocked is None:
        return scores.softmax(-1).matmul(value)
    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1).masked_fill(blocked, 0.0)
    return weights.matmul(value)
