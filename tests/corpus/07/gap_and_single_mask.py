# expect: mask_combine_wrong
# bug-lines: 13
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.size(-2), key.size(-2)
    causal_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1) if causal else None
    pad = key_padding_mask[:, None, None, :] if key_padding_mask is not None else None
    if causal_mask is not None and pad is not None:
        blocked = causal_mask & pad
    else:
        blocked = causal_mask if causal_mask is not None else pad
    scores = (query @ key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if blocked is not None:
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    w = torch.softmax(scores, dim=-1)
    if blocked is not None:
        w = w.masked_fill(blocked, 0.0)
    return w @ value
