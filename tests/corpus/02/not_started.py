# expect: not_started
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    # TODO: scores = query @ key^T / sqrt(d_k)               -> (..., L, S)
    # TODO: where mask is True, the score must become -inf
    # TODO: weights = softmax over the keys; output = weights @ value
    raise NotImplementedError("compute scaled dot-product attention")
