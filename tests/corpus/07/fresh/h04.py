# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query @ key.transpose(-2, -1)) * scale
    L, S = scores.shape[-2:]
    mask = None
    if causal:
        mask = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]
        mask = pad if mask is None else (mask | pad)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    # rows where everything was blocked come out as NaN -> make them 0
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ value
