# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(query.shape[-1])
    if mask is not None:
        very_negative = torch.finfo(scores.dtype).min
        scores = torch.where(mask, torch.full_like(scores, very_negative), scores)
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights
