# expect: mask_after_softmax
# bug-lines: 12, 14
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(d_k)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)
    output = weights @ value
    return output, weights
