# expect: mask_inverted
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scale = 1.0 / math.sqrt(query.shape[-1])
    logits = torch.einsum("...ld,...sd->...ls", query, key) * scale
    if mask is not None:
        neg_inf = torch.full_like(logits, float("-inf"))
        logits = torch.where(mask, logits, neg_inf)
    attn = torch.softmax(logits, dim=-1)
    return torch.einsum("...ls,...sv->...lv", attn, value), attn
