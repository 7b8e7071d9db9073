# expect: scale_not_sqrt
# also: mask_inverted
# bug-lines: 10,13
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1)
    scores = scores / d_k
    if mask is not None:
        keep = mask  # positions we can attend to
        scores = scores.masked_fill(~keep, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
