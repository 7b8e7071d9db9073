# expect: scale_wrong_dim
# bug-lines: 9, 10
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d = value.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
