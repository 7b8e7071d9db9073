# expect: fp16_fill_overflow
# bug-lines: 7
import math

import torch

NEG = -1e9


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    L, S = query.size(-2), key.size(-2)
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(d_k)

    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, None, :]

    scores = scores.masked_fill(blocked, NEG)
    attn = scores.softmax(dim=-1).masked_fill(blocked, 0.0)
    return attn @ value
