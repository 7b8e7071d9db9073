# expect: mask_inverted
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scale = 1.0 / math.sqrt(query.shape[-1])
    attn_logits = query @ key.transpose(-2, -1) * scale
    if mask is not None:
        # keep where the mask allows attention, -inf elsewhere
        attn_logits = attn_logits.masked_fill(mask.logical_not(), -math.inf)
    attention = torch.softmax(attn_logits, dim=-1)
    values = attention @ value
    return values, attention
