# expect: fp16_fill_overflow
# bug-lines: 7
import math

import torch

NEG_INF = -1e9  # large negative number instead of -inf, so no NaN


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)

    mask = torch.zeros(B, 1, L, S, dtype=torch.bool, device=query.device)
    if causal:
        mask = mask | torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
    if key_padding_mask is not None:
        mask = mask | key_padding_mask.view(B, 1, 1, S)

    scores = scores.masked_fill(mask, NEG_INF)
    attn = torch.softmax(scores, dim=-1)
    attn = attn * (~mask.all(dim=-1, keepdim=True))
    return attn @ value
