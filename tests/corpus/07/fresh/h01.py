# expect: masked_rows_nan
# bug-lines: 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    L, S = scores.shape[-2], scores.shape[-1]
    if causal:
        future = torch.triu(torch.ones(L, S, dtype=torch.bool, device=scores.device), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    if key_padding_mask is not None:
        scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value)
