# expect: pass
# source: harvardnlp/annotated-transformer/the_annotated_transformer.py, def attention (commit debc9fd)
# license: MIT
# changes: renamed attention -> scaled_dot_product_attention (contract name); the optional dropout argument
#   is dropped (not in the contract's signature); the author's mask means True/1 = keep (masked_fill(mask == 0)),
#   the contract's means True = blocked, so the fill condition is `mask` instead of `mask == 0`.
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn
