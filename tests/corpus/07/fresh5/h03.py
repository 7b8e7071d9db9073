# expect: masked_rows_nan
# bug-lines: 22
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.size(-2), key.size(-2)
    scale = 1.0 / math.sqrt(query.size(-1))
    scores = torch.einsum("bhld,bhsd->bhls", query, key) * scale

    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.triu(torch.ones_like(blocked), diagonal=1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.unsqueeze(1).unsqueeze(1)

    scores = scores.masked_fill(blocked, float("-inf"))
    weights = scores.softmax(dim=-1)
    alive = (~blocked).any(dim=-1, keepdim=True).to(weights.dtype)
    weights = weights * alive
    return torch.einsum("bhls,bhsd->bhld", weights, value)
