# expect: fp16_fill_overflow
# bug-lines: 22
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    L, S = query.size(-2), key.size(-2)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)

    blocked = None
    if causal:
        blocked = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]
        blocked = pad if blocked is None else (blocked | pad)
    if blocked is None:
        return torch.matmul(torch.softmax(scores, dim=-1), value)

    neg = -1e9
    scores = scores.masked_fill(blocked, neg)
    weights = torch.softmax(scores, dim=-1).masked_fill(blocked, 0.0)
    return torch.matmul(weights, value)
