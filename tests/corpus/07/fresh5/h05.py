# expect: runtime_error
# bug-lines: 9
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, T, D = query.shape
    logits = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(D)
    neg = torch.finfo(logits.dtype).min

    blocked = torch.zeros(B, 1, T, T, dtype=torch.bool, device=query.device)
    if causal:
        blocked |= torch.triu(torch.ones(T, T, dtype=torch.bool, device=query.device), 1)
    if key_padding_mask is not None:
        blocked |= key_padding_mask.view(B, 1, 1, T)

    logits = logits.masked_fill(blocked, neg)
    probs = torch.softmax(logits, dim=-1).masked_fill(blocked, 0.0)
    return torch.matmul(probs, value)
