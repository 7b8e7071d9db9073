# expect: scale_not_sqrt
# held-out: divides the scores by d_k itself rather than its square root.
# bug-lines: 9
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / d_k
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
