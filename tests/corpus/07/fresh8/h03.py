# expect: fp16_fill_overflow
# bug-lines: 20
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    L, S = query.size(-2), key.size(-2)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)

    blocked = torch.zeros(L, S, dtype=torch.bool, device=scores.device)
    if causal:
        blocked = torch.triu(torch.ones_like(blocked), diagonal=1)
    blocked = blocked.expand(scores.size(0), 1, L, S)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.unsqueeze(1).unsqueeze(2)

    scores = scores.masked_fill(blocked, -1e9)
    attn = torch.softmax(scores, dim=-1)
    attn = attn.masked_fill(blocked, 0.0)
    return torch.matmul(attn, value)
