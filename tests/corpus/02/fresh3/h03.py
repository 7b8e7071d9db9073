# expect: mask_inverted
# bug-lines: 13
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    dk = key.shape[-1]
    logits = torch.einsum("...ld,...sd->...ls", query, key) / math.sqrt(dk)
    if mask is not None:
        # same as the Annotated Transformer: mask == 0 means "hide"
        logits = logits.masked_fill(mask == 0, float("-inf"))
    attn = torch.softmax(logits, dim=-1)
    out = torch.einsum("...ls,...sv->...lv", attn, value)
    return out, attn
