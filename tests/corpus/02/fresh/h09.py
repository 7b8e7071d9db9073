# expect: mask_missing
# bug-lines: 12
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = query.matmul(key.transpose(-2, -1)).div(math.sqrt(d_k))
    if mask is not None:
        scores.masked_fill(mask, float("-inf"))
    weights = scores.softmax(-1)
    output = weights.matmul(value)
    return output, weights
