# expect: softmax_wrong_dim
# held-out: takes the softmax over dim=-2 (the queries) instead of the keys.
# bug-lines: 14
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(key.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, -1e9)
    attn = F.softmax(scores, dim=-2)
    return torch.matmul(attn, value), attn
