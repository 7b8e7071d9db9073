# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = torch.einsum("...ld,...sd->...ls", query, key) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    output = torch.einsum("...ls,...sv->...lv", weights, value)
    return output, weights
