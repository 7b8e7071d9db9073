# expect: fp16_fill_overflow
# bug-lines: 19
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    L, S = query.size(-2), key.size(-2)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)

    mask = torch.zeros((L, S), dtype=torch.bool, device=query.device)
    if causal:
        mask = torch.triu(torch.ones((L, S), dtype=torch.bool, device=query.device), 1)
    if key_padding_mask is not None:
        mask = mask | key_padding_mask.unsqueeze(1).unsqueeze(2)

    scores = scores.masked_fill(mask, -1e9)
    attn = torch.softmax(scores, dim=-1)
    attn = attn.masked_fill(mask, 0.0)
    return torch.matmul(attn, value)
