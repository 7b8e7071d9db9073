# expect: mask_zero_fill
# bug-lines: 15
import math

import torch


def _scores(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.shape[-1])


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = _scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask, 0.0)
    weights = torch.softmax(scores, dim=-1)
    output = weights @ value
    return output, weights
