# expect: dtype_not_kept
# bug-lines: 18,20
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    L, S = scores.shape[-2:]
    blocked = torch.zeros(L, S, dtype=torch.bool, device=scores.device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=scores.device).triu(1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, None, :]
    # softmax in float32 for stability
    scores = scores.float().masked_fill(blocked, torch.finfo(torch.float32).min)
    probs = torch.softmax(scores, dim=-1).masked_fill(blocked, 0.0)
    return probs @ value.float()
