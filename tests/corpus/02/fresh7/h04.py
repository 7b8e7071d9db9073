# expect: mask_zero_fill
# bug-lines: 14
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = key.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        keep = (~mask).to(scores.dtype)
        scores = scores * keep
    weights = F.softmax(scores, dim=-1)
    return weights @ value, weights
