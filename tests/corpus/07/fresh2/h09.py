# expect: mask_combine_wrong
# also: dtype_not_kept
# bug-lines: 22, 28
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    q, k, v = query.float(), key.float(), value.float()
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)

    causal_block = torch.zeros(L, S, dtype=torch.bool, device=q.device)
    if causal:
        causal_block = torch.triu(torch.ones(L, S, dtype=torch.bool, device=q.device), 1)
    pad_block = torch.zeros(B, 1, 1, S, dtype=torch.bool, device=q.device)
    if key_padding_mask is not None:
        pad_block = key_padding_mask.view(B, 1, 1, S)
    if causal and key_padding_mask is not None:
        blocked = causal_block & pad_block
    else:
        blocked = causal_block | pad_block

    scores = scores.masked_fill(blocked, float("-inf"))
    weights = torch.softmax(scores, dim=-1).masked_fill(blocked, 0.0)
    return weights @ v
