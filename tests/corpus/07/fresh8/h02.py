# expect: pass
"""Padding + causal attention; softmax done in at least float32, rows with no key give zeros."""
import math

import torch


def blocked_keys(key_padding_mask, causal, L, S, device):
    mask = None
    if causal:
        i = torch.arange(L, device=device).unsqueeze(1)
        j = torch.arange(S, device=device).unsqueeze(0)
        mask = (j > i)[None, None]                      # (1, 1, L, S)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]        # (B, 1, 1, S)
        mask = pad if mask is None else (mask | pad)
    return mask


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    out_dtype = query.dtype
    work = torch.promote_types(out_dtype, torch.float32)
    q, k, v = query.to(work), key.to(work), value.to(work)
    L, S = q.shape[-2], k.shape[-2]

    s = torch.einsum("bhld,bhsd->bhls", q, k) * (1.0 / math.sqrt(q.shape[-1]))
    mask = blocked_keys(key_padding_mask, causal, L, S, q.device)
    if mask is None:
        p = s.softmax(dim=-1)
    else:
        has_key = ~mask.all(dim=-1, keepdim=True)       # rows with at least one visible key
        s = torch.where(mask & has_key, torch.tensor(float("-inf"), dtype=work, device=q.device), s)
        p = s.softmax(dim=-1) * has_key.to(work)
    out = torch.einsum("bhls,bhsd->bhld", p, v)
    return out.to(out_dtype)
