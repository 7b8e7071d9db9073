# expect: mask_zero_fill
# bug-lines: 12
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scale = 1.0 / math.sqrt(key.shape[-1])
    attn = query @ key.transpose(-1, -2) * scale
    if mask is not None:
        attn = attn.masked_fill(mask, 0.0)
    attn = attn.softmax(dim=-1)
    out = attn @ value
    return out, attn
