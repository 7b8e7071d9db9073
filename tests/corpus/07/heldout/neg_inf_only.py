# expect: masked_rows_nan
# held-out: combines the masks correctly and fills -inf, but does nothing for queries whose every key is blocked (softmax gives NaN).
# bug-lines: 15, 17, 18
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if causal:
        future = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), 1)
        scores = scores.masked_fill(future, float("-inf"))
    if key_padding_mask is not None:
        scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ value
