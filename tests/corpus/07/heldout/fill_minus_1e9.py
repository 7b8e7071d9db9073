# expect: fp16_fill_overflow
# held-out: fills with -1e9 and zeroes blocked weights afterwards; right in float32/64 but -1e9 does not fit in float16.
# bug-lines: 18
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    mask = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        mask = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
    if key_padding_mask is not None:
        mask = mask | key_padding_mask.view(B, 1, 1, S)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    scores = scores.masked_fill(mask, -1e9)
    probs = torch.softmax(scores, dim=-1).masked_fill(mask, 0.0)
    return probs @ value
