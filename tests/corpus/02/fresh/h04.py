# expect: mask_after_softmax
# bug-lines: 16
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V with an optional boolean mask (True = blocked)."""
    d_k = query.shape[-1]
    logits = query @ key.transpose(-2, -1)
    logits = logits / math.sqrt(d_k)
    probs = torch.softmax(logits, dim=-1)
    if mask is not None:
        # remove attention to the blocked keys
        probs = probs.masked_fill(mask, 0.0)
    return probs @ value, probs
