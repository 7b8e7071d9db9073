# expect: mask_diagonal
# bug-lines: 13
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d = query.shape
    S = key.shape[-2]
    blocked = torch.zeros(B, 1, L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = blocked | torch.ones(L, S, dtype=torch.bool, device=query.device).triu()
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, None, :]
    s = query @ key.transpose(-2, -1) / math.sqrt(d)
    s = s.masked_fill(blocked, torch.finfo(s.dtype).min)
    p = torch.softmax(s, dim=-1).masked_fill(blocked, 0)
    return p @ value
