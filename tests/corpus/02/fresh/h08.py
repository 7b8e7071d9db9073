# expect: batched_transpose
# bug-lines: 11
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.shape[-1]
    # (S, d_k) -> (d_k, S)
    key_t = key.transpose(0, 1)
    scores = torch.matmul(query, key_t) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    output = torch.matmul(weights, value)
    return output, weights
