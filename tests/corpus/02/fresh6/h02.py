# expect: pass
import math

import torch


def _stable_softmax(logits):
    # subtract the row maximum before exponentiating
    shifted = logits - logits.amax(dim=-1, keepdim=True)
    numer = torch.exp(shifted)
    return numer / numer.sum(dim=-1, keepdim=True)


def scaled_dot_product_attention(query, key, value, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V, with an optional boolean mask (True = blocked)."""
    d_k = key.shape[-1]
    logits = torch.einsum("...ld,...sd->...ls", query, key) / math.sqrt(d_k)
    if mask is not None:
        neg_inf = torch.full_like(logits, float("-inf"))
        logits = torch.where(mask, neg_inf, logits)
    weights = _stable_softmax(logits)
    return torch.einsum("...ls,...sv->...lv", weights, value), weights
