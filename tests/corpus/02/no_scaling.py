# expect: no_scaling
# bug-lines: 7, 10
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
