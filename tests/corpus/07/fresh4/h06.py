# expect: masked_rows_not_zero
# also: dtype_not_kept
# bug-lines: 24, 25
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    # softmax in float32 for stability
    q, k, v = query.float(), key.float(), value.float()
    B, H, L, d_k = q.shape
    S = k.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(d_k)

    blocked = torch.zeros(B, 1, L, S, dtype=torch.bool, device=q.device)
    if causal:
        blocked |= torch.triu(torch.ones(L, S, dtype=torch.bool, device=q.device), diagonal=1)
    if key_padding_mask is not None:
        blocked |= key_padding_mask[:, None, None, :]

    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out
