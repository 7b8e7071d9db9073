# expect: mask_inverted
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        # keep the scores where mask is True (torch SDPA's convention, not this one)
        scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
