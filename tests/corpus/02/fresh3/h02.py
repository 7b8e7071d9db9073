# expect: mask_zero_fill
# bug-lines: 14
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    # Port of the Annotated Transformer's `attention` function
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, 0.0)
    weights = torch.softmax(scores, dim=-1)
    output = weights @ value
    return output, weights
