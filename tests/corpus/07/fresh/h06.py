# expect: padding_mask_inverted
# bug-lines: 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    L, S = scores.shape[-2:]
    blocked = torch.zeros(L, S, dtype=torch.bool, device=scores.device)
    if causal:
        blocked = torch.triu(torch.ones(L, S, dtype=torch.bool, device=scores.device), 1)
    if key_padding_mask is not None:
        keep = key_padding_mask[:, None, None, :]
        blocked = blocked | ~keep
    neg = torch.finfo(scores.dtype).min
    w = torch.softmax(scores.masked_fill(blocked, neg), dim=-1)
    w = w * (~blocked)
    return w @ value
