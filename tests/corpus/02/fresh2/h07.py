# expect: mask_after_softmax
# bug-lines: 12, 14
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    dk = query.shape[-1]
    raw = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(dk)
    weights = F.softmax(raw, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)
    output = torch.matmul(weights, value)
    return output, weights
