# expect: mask_combine_wrong
# bug-lines: 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d = query.shape
    S = key.shape[-2]
    future = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        future = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
    padding = torch.zeros(B, S, dtype=torch.bool, device=query.device)
    if key_padding_mask is not None:
        padding = key_padding_mask
    blocked = future & padding[:, None, None, :]  # & keeps only keys blocked by both
    s = query @ key.transpose(-2, -1) / math.sqrt(d)
    s = s.masked_fill(blocked, torch.finfo(s.dtype).min)
    return torch.softmax(s, dim=-1).masked_fill(blocked, 0.0) @ value
