# expect: mask_combine_wrong
# also: masked_rows_not_zero
# bug-lines: 19, 24
import math
import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d = query.shape[-1]
    L = query.shape[-2]
    S = key.shape[-2]
    scores = torch.matmul(query, key.transpose(-2, -1)) * d ** -0.5

    blocked = None
    if causal:
        blocked = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), 1)
    if key_padding_mask is not None:
        pad = key_padding_mask.view(-1, 1, 1, S)
        blocked = pad if blocked is None else (blocked & pad)

    if blocked is not None:
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value)
