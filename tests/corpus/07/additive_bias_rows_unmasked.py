# expect: masked_rows_not_zero
# bug-lines: 16
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, L, S = query.size(0), query.size(-2), key.size(-2)
    blocked = torch.zeros(B, 1, L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = blocked | torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, None, :]
    scores = query @ key.transpose(-2, -1) * (1.0 / math.sqrt(query.size(-1)))
    scores = scores - 30000.0 * blocked.to(scores.dtype)
    return torch.softmax(scores, dim=-1) @ value
