# expect: padding_mask_broadcast
# also: dtype_not_kept
# bug-lines: 17, 22
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.shape[-1]
    scores = (query.float() @ key.float().transpose(-2, -1)) / math.sqrt(d_k)
    L, S = scores.shape[-2:]
    blocked = torch.zeros_like(scores, dtype=torch.bool)
    if causal:
        blocked = blocked | torch.ones(L, S, dtype=torch.bool, device=scores.device).triu(1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.unsqueeze(1)
    scores = scores.masked_fill(blocked, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    weights = weights.masked_fill(blocked, 0.0)
    out = weights @ value.float()
    return out.to(scores.dtype)
