# expect: forbidden_api
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    attn_mask = None if mask is None else ~mask
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    return out, torch.softmax(scores, dim=-1)
