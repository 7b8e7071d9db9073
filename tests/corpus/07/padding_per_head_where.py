# expect: padding_mask_broadcast
# also: masked_rows_nan
# bug-lines: 14, 18
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d = query.size(-1)
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(d)
    neg = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
    if key_padding_mask is not None:
        scores = torch.where(key_padding_mask[:, None, :], neg, scores)
    if causal:
        future = torch.triu(torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device), 1)
        scores = torch.where(future, neg, scores)
    return torch.matmul(scores.softmax(-1), value)
