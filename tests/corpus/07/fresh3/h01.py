# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S, d_k = query.size(-2), key.size(-2), query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)

    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, None, :]

    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    # rows where every key is blocked: the softmax is uniform there; zero them out
    weights = weights.masked_fill(blocked.all(dim=-1, keepdim=True), 0.0)
    return torch.matmul(weights, value)
