# expect: nan_output
# held-out: builds the additive mask as mask.float() * -inf, but 0 * -inf is NaN, so every allowed score becomes NaN.
# bug-lines: 12
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores + mask.to(scores.dtype) * float("-inf")
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
