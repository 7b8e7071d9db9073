# expect: mask_after_softmax
# bug-lines: 16
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = query.matmul(key.transpose(-2, -1)).div(math.sqrt(d_k))

    weights = torch.softmax(scores, dim=-1)

    if mask is not None:
        # zero out the positions the query may not see
        weights = weights.masked_fill(mask, 0.0)

    output = weights.matmul(value)
    return output, weights
