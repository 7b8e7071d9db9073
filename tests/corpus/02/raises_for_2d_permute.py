# expect: runtime_error
# bug-lines: 9
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    keys_t = key.permute(0, 2, 1)  # (B, d, S): only a 3-D key has three dims to permute
    scores = query.matmul(keys_t) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights.matmul(value), weights
