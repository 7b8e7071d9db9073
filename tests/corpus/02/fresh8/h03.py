# expect: mask_inverted
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scale = 1 / math.sqrt(key.shape[-1])
    scores = query @ key.transpose(-1, -2) * scale
    if mask is not None:
        # keep only the positions the mask allows
        scores = scores.masked_fill(~mask, -math.inf)
    weights = scores.softmax(-1)
    return weights @ value, weights
