# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.einsum("...ld,...sd->...ls", query, key)
    scores = scores * (1.0 / math.sqrt(query.shape[-1]))
    if mask is not None:
        neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
        scores = torch.where(mask, neg_inf, scores)
    weights = torch.softmax(scores, dim=-1)
    output = torch.einsum("...ls,...sv->...lv", weights, value)
    return output, weights
