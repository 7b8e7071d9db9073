# expect: mask_zero_fill
# also: softmax_wrong_dim
# bug-lines: 14, 15
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        visible = torch.logical_not(mask).to(scores.dtype)
        scores = scores * visible
    weights = torch.softmax(scores, dim=-2)
    output = weights @ value
    return output, weights
