# expect: api_mismatch
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    # returns only the context vectors: the weights were forgotten
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, -float("inf"))
    return torch.matmul(scores.softmax(dim=-1), value)
