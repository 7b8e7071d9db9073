# expect: mask_after_softmax
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scale = 1.0 / math.sqrt(query.size(-1))
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale
    attn = torch.softmax(scores, dim=-1)
    if mask is not None:
        attn = attn.masked_fill(mask, 0.0)
    out = torch.matmul(attn, value)
    return out, attn
