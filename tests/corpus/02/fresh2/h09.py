# expect: batched_transpose
# bug-lines: 10
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    # key^T: swap the two axes of key
    key_t = key.transpose(0, 1)
    scores = torch.matmul(query, key_t) / math.sqrt(key.shape[-1])
    if mask is not None:
        scores.masked_fill_(mask, -float("inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights
