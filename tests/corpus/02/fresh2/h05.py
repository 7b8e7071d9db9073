# expect: scale_wrong_dim
# bug-lines: 10
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    # dimension of the vectors that get averaged
    d = value.size(-1)
    scores = torch.matmul(query, key.transpose(-1, -2))
    scores = scores / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask, float('-inf'))
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn
