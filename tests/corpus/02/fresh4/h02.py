# expect: scale_wrong_dim
# bug-lines: 10
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = value.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn
