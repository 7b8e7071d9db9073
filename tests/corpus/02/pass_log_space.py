# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    """Numerically explicit softmax: subtract the row max, exponentiate, normalise."""
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, -math.inf)
    row_max = scores.amax(dim=-1, keepdim=True)
    e = torch.exp(scores - row_max)
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ value, weights
