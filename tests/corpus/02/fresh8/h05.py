# expect: runtime_error
# bug-lines: 12
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.shape[-1]
    scores = query.matmul(key.transpose(-2, -1)).div(math.sqrt(d_k))
    if mask is not None:
        scores[mask] = float("-inf")
    weights = scores.softmax(dim=-1)
    return weights.matmul(value), weights
