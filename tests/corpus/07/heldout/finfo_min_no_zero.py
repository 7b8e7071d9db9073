# expect: masked_rows_not_zero
# held-out: fills blocked scores with finfo(dtype).min (no NaN, no fp16 overflow) but never zeroes the rows that have no key.
# bug-lines: 19, 20
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    blocked = torch.zeros(B, 1, L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = blocked | torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(B, 1, 1, S)
    att = (query @ key.transpose(-2, -1)) / math.sqrt(d_k)
    att = att.masked_fill(blocked, torch.finfo(att.dtype).min)
    att = torch.softmax(att, dim=-1)
    return att @ value
