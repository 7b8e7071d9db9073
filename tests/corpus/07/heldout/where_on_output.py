# expect: masked_rows_nan_grad
# held-out: -inf fill, then patches NaN rows of the output with torch.where(isnan, 0, out); forward is clean, backward still NaN.
# bug-lines: 18, 19, 20
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(diagonal=1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(B, 1, 1, S)
    att = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    att = att.masked_fill(blocked, float("-inf"))
    out = torch.softmax(att, dim=-1) @ value
    return torch.where(torch.isnan(out), torch.zeros_like(out), out)
