# expect: mask_combine_wrong
# held-out: combines the causal and padding block-masks with & instead of |, so only keys that are both future and padding are blocked.
# bug-lines: 19
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    causal_mask = None
    pad_mask = None
    if causal:
        causal_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(diagonal=1)
    if key_padding_mask is not None:
        pad_mask = key_padding_mask.view(B, 1, 1, S)
    if causal_mask is not None and pad_mask is not None:
        blocked = causal_mask & pad_mask
    elif causal_mask is not None:
        blocked = causal_mask
    elif pad_mask is not None:
        blocked = pad_mask
    else:
        blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    att = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    att = att.masked_fill(blocked, torch.finfo(att.dtype).min)
    att = torch.softmax(att, dim=-1).masked_fill(blocked, 0.0)
    return att @ value
