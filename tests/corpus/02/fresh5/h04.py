# expect: runtime_error
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query.matmul(key.transpose(-2, -1))
    scores = scores / math.sqrt(key.size(-1))
    if mask is not None:
        scores = scores.clone()
        scores[mask] = float("-inf")
    weights = torch.softmax(scores, dim=-1)
    return weights.matmul(value), weights
