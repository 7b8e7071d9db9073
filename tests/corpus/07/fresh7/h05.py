# expect: mask_combine_wrong
# also: dtype_not_kept
# bug-lines: 25, 32
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    low_precision = query.dtype in (torch.float16, torch.bfloat16)
    work = torch.float32 if low_precision else query.dtype
    q = query.to(work)
    k = key.to(work)
    v = value.to(work)
    n_q, n_k = q.shape[-2], k.shape[-2]

    scores = q @ k.transpose(-2, -1)
    scores = scores / math.sqrt(q.shape[-1])

    mask = None
    if causal:
        mask = torch.triu(torch.ones(n_q, n_k, device=q.device), diagonal=1).bool()
    if key_padding_mask is not None:
        pad = key_padding_mask.unsqueeze(1).unsqueeze(2)
        mask = pad if mask is None else (mask & pad)

    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)
    return weights @ v
