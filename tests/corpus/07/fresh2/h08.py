# expect: padding_mask_on_queries
# bug-lines: 14
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    scores = torch.einsum("bhld,bhsd->bhls", query, key) / math.sqrt(d_k)
    blocked = None
    if key_padding_mask is not None:
        blocked = key_padding_mask.view(B, 1, S, 1)
    if causal:
        tri = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
        blocked = tri if blocked is None else blocked | tri
    if blocked is not None:
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if blocked is not None:
        weights = weights.masked_fill(blocked, 0.0)
    return torch.einsum("bhls,bhsd->bhld", weights, value)
