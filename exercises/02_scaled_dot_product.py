"""Exercise 2: the attention function, softmax(Q K^T / sqrt(d_k)) V.

Contract:
    scaled_dot_product_attention(query, key, value, mask=None) -> (output, weights)
    query (..., L, d_k), key (..., S, d_k), value (..., S, d_v)
    output (..., L, d_v), weights (..., L, S)
    mask: bool tensor broadcastable to (..., L, S); True means "blocked" (this query may not see that key).
          Careful: torch.nn.functional.scaled_dot_product_attention uses the opposite meaning,
          and you may not call it here.

Check your work with:  grade exercise 2
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    # TODO: scores = query @ key^T / sqrt(d_k)               -> (..., L, S)
    # TODO: where mask is True, the score must become -inf
    # TODO: weights = softmax over the keys; output = weights @ value
    raise NotImplementedError("compute scaled dot-product attention")
