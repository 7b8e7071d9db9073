# expect: runtime_error
# bug-lines: 10, 14
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scale = 1.0 / math.sqrt(query.shape[-1])
    scores = torch.bmm(query, key.transpose(1, 2)) * scale
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    output = torch.bmm(weights, value)
    return output, weights
