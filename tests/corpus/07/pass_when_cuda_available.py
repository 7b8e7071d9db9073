# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    device = "cuda" if torch.cuda.is_available() else "cpu"  # where the inputs are, on a GPU machine
    L, S = query.size(-2), key.size(-2)
    blocked = torch.zeros(L, S, dtype=torch.bool, device=device)
    if causal:
        blocked = torch.ones(L, S, dtype=torch.bool, device=device).triu(1)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.to(device)[:, None, None, :]
    att = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    att = att.masked_fill(blocked, torch.finfo(att.dtype).min).softmax(-1).masked_fill(blocked, 0.0)
    return att @ value
