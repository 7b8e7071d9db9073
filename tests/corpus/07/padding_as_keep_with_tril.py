# expect: padding_mask_inverted
# bug-lines: 15
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.shape[-2], key.shape[-2]
    scores = torch.einsum("bhld,bhsd->bhls", query, key) / math.sqrt(query.shape[-1])
    visible = torch.ones(L, S, dtype=torch.bool, device=query.device)
    if causal:
        visible = torch.tril(visible)
    if key_padding_mask is not None:
        visible = visible.logical_and(key_padding_mask.unsqueeze(1).unsqueeze(1))
    scores = torch.where(visible, scores, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(visible, weights, 0.0)
    return torch.einsum("bhls,bhsd->bhld", weights, value)
