# expect: softmax_wrong_dim
# bug-lines: 14
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = key.size(-1)
    kt = key.transpose(-2, -1)
    scores = (query @ kt) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, -float("inf"))
    weights = torch.softmax(scores, dim=-2)
    output = weights @ value
    return output, weights
