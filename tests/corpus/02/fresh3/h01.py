# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V, with True in `mask` meaning blocked."""
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn
