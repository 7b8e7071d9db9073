# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    out_dtype = query.dtype
    work = torch.promote_types(out_dtype, torch.float32)  # float16/bfloat16 -> float32, float64 stays
    q, k, v = query.to(work), key.to(work), value.to(work)

    B, H, L, d_k = q.shape
    S = k.shape[2]
    scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d_k)

    keep = torch.ones(B, 1, L, S, dtype=torch.bool, device=q.device)
    if causal:
        keep = keep & torch.tril(torch.ones(L, S, dtype=torch.bool, device=q.device))
    if key_padding_mask is not None:
        keep = keep & ~key_padding_mask.reshape(B, 1, 1, S)

    scores = scores.masked_fill(~keep, torch.finfo(work).min)
    weights = torch.softmax(scores, dim=-1) * keep  # empty rows: uniform * 0 = 0
    out = torch.matmul(weights, v)
    return out.to(out_dtype)
