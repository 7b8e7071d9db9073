# expect: padding_mask_on_queries
# bug-lines: 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) * (1.0 / math.sqrt(d_k))
    L, S = scores.shape[-2:]

    blocked = torch.zeros_like(scores, dtype=torch.bool)
    if causal:
        blocked = blocked | torch.ones(L, S, dtype=torch.bool, device=scores.device).triu(1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, :, None]

    fill = torch.finfo(scores.dtype).min
    weights = scores.masked_fill(blocked, fill).softmax(dim=-1)
    weights = weights.masked_fill(blocked, 0.0)
    return weights @ value
