# expect: pass
import math

import torch


def _keep_mask(n_q, n_k, key_padding_mask, causal, device):
    """(B or 1, 1, n_q, n_k) bool, True where the query may attend."""
    keep = torch.ones(n_q, n_k, dtype=torch.bool, device=device)
    if causal:
        keep = torch.tril(keep)
    keep = keep[None, None, :, :]
    if key_padding_mask is not None:
        real_tokens = ~key_padding_mask
        keep = keep & real_tokens[:, None, None, :]
    return keep


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    in_dtype = query.dtype
    work_dtype = torch.promote_types(in_dtype, torch.float32)
    q, k, v = query.to(work_dtype), key.to(work_dtype), value.to(work_dtype)

    keep = _keep_mask(q.size(-2), k.size(-2), key_padding_mask, causal, q.device)
    # Hugging Face style: an additive bias, 0 where allowed, the lowest float elsewhere
    bias = torch.zeros(keep.shape, dtype=work_dtype, device=q.device)
    bias = bias.masked_fill(~keep, torch.finfo(work_dtype).min)

    attn = torch.matmul(q, k.transpose(-1, -2)) * (q.size(-1) ** -0.5)
    attn = torch.softmax(attn + bias, dim=-1)
    attn = attn * keep
    out = torch.matmul(attn, v)
    return out.to(in_dtype)
