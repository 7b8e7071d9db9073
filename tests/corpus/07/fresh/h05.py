# expect: fp16_fill_overflow
# bug-lines: 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.shape[-1]
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(d_k)
    L, S = query.shape[-2], key.shape[-2]
    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(diagonal=1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.unsqueeze(1).unsqueeze(2)
    scores = scores.masked_fill(blocked, -1e9)
    probs = torch.softmax(scores, dim=-1)
    probs = probs.masked_fill(blocked, 0.0)
    return torch.matmul(probs, value)
