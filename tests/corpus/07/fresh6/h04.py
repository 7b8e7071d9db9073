# expect: padding_mask_broadcast
# also: masked_rows_nan
# bug-lines: 19, 23
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    # scaled scores, one row per query
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(query.shape[-1])

    L, S = scores.shape[-2:]
    mask = torch.zeros(L, S, dtype=torch.bool, device=scores.device)
    if causal:
        mask = torch.ones(L, S, dtype=torch.bool, device=scores.device).triu(diagonal=1)
    if key_padding_mask is not None:
        mask = mask | key_padding_mask.unsqueeze(1)

    scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value
