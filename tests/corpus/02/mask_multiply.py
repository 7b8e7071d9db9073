# expect: mask_zero_fill
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        # zero out the blocked scores by multiplying with the "allowed" pattern
        scores = scores * (~mask).to(scores.dtype)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
