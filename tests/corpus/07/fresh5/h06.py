# expect: mask_combine_wrong
# bug-lines: 16
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    keep = None
    if causal:
        keep = torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
    if key_padding_mask is not None:
        real = ~key_padding_mask.view(B, 1, 1, S)
        keep = real if keep is None else keep | real

    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if keep is None:
        return torch.matmul(torch.softmax(scores, dim=-1), value)
    scores = scores.masked_fill(~keep, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(keep, weights, torch.zeros_like(weights))
    return torch.matmul(weights, value)
