# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V, with einsum.

    Scaling q first is the same as scaling the scores (it is a linear map).
    """
    q = query * query.shape[-1] ** -0.5
    logits = torch.einsum("...ld,...sd->...ls", q, key)
    if mask is not None:
        neg_inf = torch.full_like(logits, float("-inf"))
        logits = torch.where(mask, neg_inf, logits)
    attn = logits.softmax(dim=-1)
    out = torch.einsum("...ls,...sv->...lv", attn, value)
    return out, attn
