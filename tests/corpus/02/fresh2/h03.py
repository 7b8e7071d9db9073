# expect: pass
import math

import torch
import torch.nn.functional as F


def _scores(query, key):
    # (..., L, d_k) x (..., S, d_k) -> (..., L, S)
    return query @ key.mT


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = key.size(-1)
    scores = _scores(query, key) / math.sqrt(d_k)

    # A very negative finite number works as well as -inf for rows that keep a key,
    # and keeps fully blocked rows finite.
    if mask is not None:
        big_negative = torch.finfo(scores.dtype).min
        scores = scores.masked_fill(mask.bool(), big_negative)

    weights = F.softmax(scores, dim=-1)
    return weights @ value, weights
