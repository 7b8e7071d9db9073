# expect: mask_zero_fill
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = query.matmul(key.transpose(-2, -1)).div(math.sqrt(d_k))
    if mask is not None:
        # zero out the blocked positions
        scores = scores * (~mask)
    weights = scores.softmax(-1)
    return weights.matmul(value), weights
