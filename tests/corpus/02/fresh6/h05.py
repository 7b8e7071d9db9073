# expect: scale_wrong_dim
# also: mask_zero_fill
# bug-lines: 11, 15
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    L, S = query.size(-2), key.size(-2)
    d = value.size(-1)
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask, 0.0)
    weights = scores.softmax(dim=-1)
    assert weights.shape[-2:] == (L, S)
    return weights @ value, weights
