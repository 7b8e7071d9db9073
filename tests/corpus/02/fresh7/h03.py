# expect: scale_wrong_dim
# bug-lines: 10
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    *_, L, _ = query.shape
    S, d = value.shape[-2:]
    scores = query @ key.transpose(-2, -1)
    scores = scores / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask, -float("inf"))
    attn = scores.softmax(dim=-1)
    return attn @ value, attn
