# expect: masked_rows_nan_grad
# bug-lines: 17, 19
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.shape[-2], key.shape[-2]
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(diagonal=1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, None, :]
    scores = scores.masked_fill(blocked, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ value
    # queries with nothing to attend to came out as NaN: make them 0
    out = torch.where(torch.isnan(out), torch.zeros_like(out), out)
    return out
