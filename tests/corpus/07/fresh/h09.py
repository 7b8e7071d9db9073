# expect: mask_combine_wrong
# bug-lines: 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    L, S = scores.shape[-2:]
    blocked = None
    if causal:
        blocked = torch.triu(torch.ones(L, S, dtype=torch.bool, device=scores.device), diagonal=1)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]
        blocked = pad if blocked is None else (blocked & pad)
    if blocked is not None:
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if blocked is not None:
        weights = weights.masked_fill(blocked, 0.0)
    return weights @ value
