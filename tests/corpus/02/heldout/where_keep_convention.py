# expect: mask_inverted
# held-out: uses torch.where(mask, scores, -inf) as if True meant "keep" (the F.sdpa convention), so it blocks the allowed keys.
# bug-lines: 12
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    weights = scores.softmax(-1)
    return weights @ value, weights
