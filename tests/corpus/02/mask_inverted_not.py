# expect: mask_inverted
# bug-lines: 11
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) * (1.0 / math.sqrt(key.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights
