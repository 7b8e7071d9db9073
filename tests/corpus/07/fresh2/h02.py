# expect: pass
import math

import torch


def _blocked(key_padding_mask, causal, L, S, device):
    """Bool mask of what a query may NOT see, or None if nothing is blocked."""
    mask = None
    if causal:
        i = torch.arange(L, device=device)[:, None]
        j = torch.arange(S, device=device)[None, :]
        mask = (j > i)[None, None]                      # (1, 1, L, S)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]        # (B, 1, 1, S)
        mask = pad if mask is None else (mask | pad)
    return mask


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    L, S = query.size(-2), key.size(-2)
    scores = torch.matmul(query, key.transpose(-1, -2)) * (1.0 / math.sqrt(query.size(-1)))
    mask = _blocked(key_padding_mask, causal, L, S, query.device)
    if mask is None:
        return torch.matmul(torch.softmax(scores, dim=-1), value)
    scores = scores.masked_fill(mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    # a fully blocked row is NaN here; masked_fill replaces it and its gradient with 0
    probs = probs.masked_fill(mask, 0.0)
    return torch.matmul(probs, value)
