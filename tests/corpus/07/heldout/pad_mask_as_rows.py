# expect: padding_mask_on_queries
# held-out: broadcasts the (B, S) padding mask as (B, 1, S, 1), blocking padded query rows instead of padded key columns.
# bug-lines: 16
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(diagonal=1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(B, 1, S, 1)
    att = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    att = att.masked_fill(blocked, torch.finfo(att.dtype).min)
    att = torch.softmax(att, dim=-1)
    att = att.masked_fill(blocked, 0.0)
    return att @ value
