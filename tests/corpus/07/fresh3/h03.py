# expect: masked_rows_nan
# bug-lines: 23, 25
import math

import torch


def _blocked_mask(key_padding_mask, causal, L, S, device):
    blocked = None
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=device).triu(1)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]
        blocked = pad if blocked is None else (blocked | pad)
    return blocked


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    scale = 1.0 / math.sqrt(query.shape[-1])
    scores = torch.einsum("bhld,bhsd->bhls", query, key) * scale
    blocked = _blocked_mask(key_padding_mask, causal, query.shape[-2], key.shape[-2], query.device)
    if blocked is not None:
        scores = scores.masked_fill(blocked, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return torch.einsum("bhls,bhsd->bhld", probs, value)
