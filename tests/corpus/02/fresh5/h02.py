# expect: scale_wrong_dim
# bug-lines: 9
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    *_, seq_k, d = value.shape
    assert key.shape[-2] == seq_k
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask, -math.inf)
    weights = scores.softmax(-1)
    return weights @ value, weights
