# expect: padding_mask_broadcast
# also: masked_rows_not_zero
# bug-lines: 15, 24
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L = query.shape[-2]
    S = key.shape[-2]
    scores = query @ key.transpose(-2, -1) / math.sqrt(key.shape[-1])

    if key_padding_mask is not None:
        pad = key_padding_mask.unsqueeze(1)
    else:
        pad = torch.zeros(1, 1, S, dtype=torch.bool, device=query.device)
    if causal:
        tri = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(diagonal=1)
        pad = pad | tri

    neg = torch.finfo(scores.dtype).min
    scores = scores.masked_fill(pad, neg)
    weights = scores.softmax(dim=-1)
    return weights @ value
