# expect: masked_rows_nan_grad
# bug-lines: 20
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.size(2), key.size(2)
    scale = 1.0 / math.sqrt(query.size(-1))
    scores = torch.matmul(query, key.transpose(2, 3)) * scale

    blocked = torch.zeros_like(scores, dtype=torch.bool)
    if causal:
        blocked |= torch.ones(L, S, dtype=torch.bool, device=scores.device).triu(1)
    if key_padding_mask is not None:
        blocked |= key_padding_mask[:, None, None, :]

    scores = scores.masked_fill(blocked, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    out = torch.matmul(probs, value)

    nothing_visible = blocked.all(dim=-1, keepdim=True)
    return torch.where(nothing_visible, torch.zeros_like(out), out)
