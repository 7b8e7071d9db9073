# expect: masked_rows_nan_grad
# bug-lines: 21
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    scores = torch.einsum("bhld,bhsd->bhls", query, key) / math.sqrt(d_k)

    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.triu(torch.ones_like(blocked), diagonal=1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(B, 1, 1, S)

    scores = scores.masked_fill(blocked, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.einsum("bhls,bhsd->bhld", weights, value)
    no_key = blocked.all(dim=-1, keepdim=True)
    return torch.where(no_key, torch.zeros_like(out), out)
