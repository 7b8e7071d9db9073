# expect: masked_rows_nan
# bug-lines: 17, 18
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d = query.shape
    S = key.shape[2]
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d)
    if key_padding_mask is not None:
        scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
    if causal:
        future = torch.triu(torch.ones(L, S, dtype=torch.bool, device=scores.device), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value)
