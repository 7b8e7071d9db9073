# expect: no_scaling
# also: mask_after_softmax
# bug-lines: 11, 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)
    output = torch.matmul(weights, value)
    return output, weights
