# expect: fp16_fill_overflow
# also: masked_rows_not_zero
# bug-lines: 14, 16, 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.shape[-2], key.shape[-2]
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if causal:
        future = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
        scores = scores.masked_fill(future, -1e9)
    if key_padding_mask is not None:
        scores = scores.masked_fill(key_padding_mask[:, None, None, :], -1e9)
    return torch.softmax(scores, dim=-1) @ value
