# expect: runtime_error
# bug-lines: 9
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    batch, n_queries, d_k = query.shape
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, -math.inf)
    weights = torch.softmax(scores, dim=-1)
    output = weights @ value
    return output, weights
