# expect: scale_not_sqrt
# bug-lines: 8
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.shape[-1]
    scores = torch.matmul(query, key.transpose(-2, -1)) / d_k
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights
