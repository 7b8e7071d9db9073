# expect: padding_mask_inverted
# bug-lines: 15
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, dk = query.shape
    S = key.shape[-2]
    scores = query @ key.transpose(-2, -1) / math.sqrt(dk)
    allowed = torch.ones(B, 1, L, S, dtype=torch.bool, device=query.device)
    if key_padding_mask is not None:
        # attention_mask style: 1 for tokens to attend to
        allowed = allowed & key_padding_mask.bool()[:, None, None, :]
    if causal:
        allowed = allowed & torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
    scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~allowed, 0.0)
    return weights @ value
