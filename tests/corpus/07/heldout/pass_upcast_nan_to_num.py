# expect: pass
# held-out: correct; upcasts half-precision scores to float32, fills -inf, softmax, nan_to_num(0.0) zeroes empty rows, casts back.
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d = query.shape
    S = key.shape[-2]
    work = torch.promote_types(query.dtype, torch.float32)
    scores = (query @ key.transpose(-2, -1)).to(work) / math.sqrt(d)
    blocked = None
    if causal:
        blocked = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]
        blocked = pad if blocked is None else (blocked | pad)
    if blocked is not None:
        scores = scores.masked_fill(blocked, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights.to(query.dtype) @ value
