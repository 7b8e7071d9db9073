# expect: scale_wrong_dim
# bug-lines: 11
import math

import torch

HEAD_SIZE = 64  # the size of the model this was written for


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(HEAD_SIZE)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
