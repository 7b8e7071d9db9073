# expect: alibi_bias_sign
import math

import torch


def alibi_attention(query, key, value):
    B, H, T, d = query.shape
    scores = query @ key.transpose(-2, -1) / math.sqrt(d)
    pos = torch.arange(T, device=query.device)
    dist = (pos[:, None] - pos[None, :]).to(query.dtype)  # i - j, positive in the past
    slopes = 2.0 ** (-8.0 * torch.arange(1, H + 1, device=query.device, dtype=query.dtype) / H)
    scores = scores + slopes.view(H, 1, 1) * dist
    future = torch.ones(T, T, dtype=torch.bool, device=query.device).triu(1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return weights @ value
