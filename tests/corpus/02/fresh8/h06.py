# expect: mask_after_softmax
# bug-lines: 12
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = key.size(-1)
    scores = query @ key.transpose(-2, -1) / d_k ** 0.5
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        # blocked keys get no weight
        weights = weights.masked_fill(mask, 0.0)
    return weights @ value, weights
