"""Reference solution for exercise 2: the scaled dot-product attention function."""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    assert key.size(-1) == d_k, "query and key must share their last dimension d_k"
    assert key.size(-2) == value.size(-2), "key and value must have the same number of positions S"
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., L, S); stage: scores, scaled_scores
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))  # True = blocked; stage: masked_scores
    weights = torch.softmax(scores, dim=-1)  # (..., L, S), rows sum to 1; stage: weights
    return weights @ value, weights  # (..., L, d_v), (..., L, S); stage: output
