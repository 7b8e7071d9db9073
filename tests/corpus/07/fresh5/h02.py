# expect: fp16_fill_overflow
# bug-lines: 7
import math

import torch

_BIG = 1.0e5


def _blocked_mask(B, L, S, key_padding_mask, causal, device):
    mask = None
    if causal:
        i = torch.arange(L, device=device)[:, None]
        j = torch.arange(S, device=device)[None, :]
        mask = (j > i).expand(B, 1, L, S)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]
        mask = pad if mask is None else (mask | pad)
    return mask


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, _, L, d_k = query.shape
    S = key.shape[2]
    scores = torch.matmul(query, key.transpose(2, 3)) * (d_k ** -0.5)
    mask = _blocked_mask(B, L, S, key_padding_mask, causal, query.device)
    if mask is None:
        return torch.matmul(torch.softmax(scores, dim=-1), value)
    scores = scores.masked_fill(mask, -_BIG)
    weights = torch.softmax(scores, dim=-1).masked_fill(mask, 0)
    return torch.matmul(weights, value)
