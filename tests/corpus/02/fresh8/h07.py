# expect: softmax_wrong_dim
# bug-lines: 15
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    # query (batch, L, d_k), key (batch, S, d_k), value (batch, S, d_v)
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = F.softmax(scores, dim=2)
    return weights @ value, weights
