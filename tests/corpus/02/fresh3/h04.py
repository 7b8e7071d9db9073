# expect: scale_wrong_dim
# bug-lines: 10
import math

import torch


def _scale_factor(q, k, v):
    # 1 / sqrt(d)
    d = v.shape[-1]
    return 1.0 / math.sqrt(d)


def scaled_dot_product_attention(query, key, value, mask=None):
    scale = _scale_factor(query, key, value)
    scores = torch.matmul(query, key.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores.masked_fill(mask, -math.inf)
    weights = torch.softmax(scores, dim=-1)
    output = torch.matmul(weights, value)
    return output, weights
