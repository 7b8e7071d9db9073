# expect: masked_rows_not_zero
# bug-lines: 19
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d = query.shape
    S = key.shape[-2]
    scores = torch.einsum("bhld,bhsd->bhls", query, key) / math.sqrt(d)
    blocked = torch.zeros(B, 1, L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = blocked | torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), 1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(B, 1, 1, S)
    # finfo.min instead of -inf: no NaN, and it fits in every dtype
    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    attn = scores.softmax(dim=-1)
    return torch.einsum("bhls,bhsv->bhlv", attn, value)
