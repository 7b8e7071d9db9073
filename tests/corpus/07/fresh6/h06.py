# expect: padding_mask_on_queries
# bug-lines: 12
import math
import torch


def _causal(L, S, device):
    return torch.ones(L, S, dtype=torch.bool, device=device).tril().logical_not()


def _padding(key_padding_mask):
    return key_padding_mask[:, None, :, None]


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.shape[2], key.shape[2]
    scores = query @ key.transpose(2, 3) / math.sqrt(key.shape[3])
    blocked = torch.zeros(1, 1, L, S, dtype=torch.bool, device=query.device)
    if causal:
        blocked = blocked | _causal(L, S, query.device)
    if key_padding_mask is not None:
        blocked = blocked | _padding(key_padding_mask)
    scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    probs = torch.softmax(scores, dim=-1).masked_fill(blocked, 0.0)
    return probs @ value
