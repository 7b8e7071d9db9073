# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    batch, _, n_queries, d_k = query.shape
    n_keys = key.shape[-2]

    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)

    # True where a query must not look
    blocked = torch.zeros(batch, 1, n_queries, n_keys, dtype=torch.bool, device=query.device)
    if causal:
        future = torch.ones(n_queries, n_keys, dtype=torch.bool, device=query.device).triu(1)
        blocked = blocked | future
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(batch, 1, 1, n_keys)

    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    # a row whose keys are all blocked came out uniform: empty it
    weights = weights.masked_fill(blocked, 0.0)
    return weights @ value
