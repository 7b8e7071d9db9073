# expect: mask_combine_wrong
# bug-lines: 21
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    """Masked attention that stays finite in every dtype."""
    B, H, L, dk = query.shape
    S = key.shape[2]
    dev = query.device

    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(dk)

    future = torch.triu(torch.ones(L, S, dtype=torch.bool, device=dev), 1) if causal else None
    padding = key_padding_mask[:, None, None, :] if key_padding_mask is not None else None

    if future is not None and padding is not None:
        blocked = future & padding
    elif future is not None:
        blocked = future.expand(B, 1, L, S)
    elif padding is not None:
        blocked = padding.expand(B, 1, L, S)
    else:
        blocked = torch.zeros(B, 1, L, S, dtype=torch.bool, device=dev)

    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    empty = blocked.all(dim=-1, keepdim=True)
    weights = weights.masked_fill(empty, 0)
    return weights @ value
