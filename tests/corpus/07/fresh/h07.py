# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.size(-2), key.size(-2)
    scores = torch.matmul(query, key.transpose(-2, -1)) * (1.0 / math.sqrt(query.size(-1)))

    blocked = None
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
    if key_padding_mask is not None:
        pad = key_padding_mask.view(key_padding_mask.size(0), 1, 1, S)
        blocked = pad if blocked is None else blocked | pad
    if blocked is None:
        return torch.matmul(torch.softmax(scores, dim=-1), value)

    # rows with nothing to attend to: leave their scores alone (no NaN) and zero them afterwards
    empty = blocked.all(dim=-1, keepdim=True)
    scores = scores.masked_fill(blocked & ~empty, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(empty, 0.0)
    return torch.matmul(weights, value)
