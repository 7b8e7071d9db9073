# expect: scale_wrong_dim
# bug-lines: 9
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    dim = value.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(dim)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights
