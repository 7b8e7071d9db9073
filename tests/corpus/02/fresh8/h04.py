# expect: scale_wrong_dim
# also: mask_zero_fill
# bug-lines: 10, 14
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    dim = value.shape[-1]
    raw = torch.matmul(query, key.transpose(-2, -1))
    raw = raw / math.sqrt(dim)
    if mask is not None:
        raw = raw.masked_fill(mask, 0.0)
    w = torch.nn.functional.softmax(raw, dim=-1)
    return torch.matmul(w, value), w
