# expect: mask_after_softmax
# bug-lines: 14
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V, with True in `mask` meaning blocked."""
    d_k = query.size(-1)
    raw = torch.matmul(query, key.transpose(-2, -1))
    scaled = raw / math.sqrt(d_k)
    probs = F.softmax(scaled, dim=-1)
    if mask is not None:
        keep = (~mask).type_as(probs)
        probs = probs * keep
    out = torch.matmul(probs, value)
    return out, probs
