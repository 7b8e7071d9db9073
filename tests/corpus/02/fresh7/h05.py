# expect: runtime_error
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.shape[-1]
    scores = torch.matmul(query, key.transpose(-1, -2))
    scores = scores / math.sqrt(d_k)
    if mask is not None:
        scores[mask] = float("-inf")
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights
