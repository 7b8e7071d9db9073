# expect: masked_rows_not_zero
# bug-lines: 20, 21
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(2)
    neg = torch.finfo(query.dtype).min
    s = (query @ key.transpose(-2, -1)) / math.sqrt(d_k)
    blocked = torch.zeros(B, 1, L, S, dtype=torch.bool, device=query.device)
    if key_padding_mask is not None:
        blocked |= key_padding_mask.view(B, 1, 1, S)
    if causal:
        blocked |= torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
    s = s.masked_fill(blocked, neg)
    # finfo.min instead of -inf: no NaN, every row is a proper distribution
    w = s.softmax(dim=-1)
    return w @ value
