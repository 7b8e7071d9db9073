# expect: padding_mask_broadcast
# also: dtype_not_kept
# bug-lines: 13, 20
import math

import torch
import torch.nn.functional as F


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L = query.shape[2]
    S = key.shape[2]
    q, k, v = query.float(), key.float(), value.float()
    att = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(q.shape[-1]))

    no_see = torch.zeros_like(att, dtype=torch.bool)
    if causal:
        no_see = no_see | torch.triu(torch.ones(L, S, dtype=torch.bool, device=att.device), 1)
    if key_padding_mask is not None:
        no_see = no_see | key_padding_mask.unsqueeze(1)

    att = att.masked_fill(no_see, float("-inf"))
    att = F.softmax(att, dim=-1)
    att = torch.nan_to_num(att, nan=0.0)
    return att @ v
