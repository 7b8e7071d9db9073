# expect: padding_mask_on_queries
# bug-lines: 20
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    L = query.size(-2)
    S = key.size(-2)
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(d_k)
    neg = torch.finfo(scores.dtype).min

    blocked = torch.zeros(1, 1, L, S, dtype=torch.bool, device=scores.device)
    if causal:
        causal_mask = torch.ones(L, S, dtype=torch.bool, device=scores.device).triu(diagonal=1)
        blocked = blocked | causal_mask
    if key_padding_mask is not None:
        pad = key_padding_mask.unsqueeze(1).unsqueeze(-1)  # (B, 1, S, 1)
        blocked = blocked | pad

    scores = scores.masked_fill(blocked, neg)
    w = torch.softmax(scores, dim=-1)
    w = torch.where(blocked.all(-1, keepdim=True), torch.zeros_like(w), w)
    return torch.matmul(w, value)
