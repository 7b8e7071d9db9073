# expect: pass
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    # Do the softmax in at least float32 (as HF does for half precision), come back at the end.
    out_dtype = query.dtype
    work = torch.promote_types(query.dtype, torch.float32)
    q, k, v = query.to(work), key.to(work), value.to(work)

    Bsz, _, L, dk = q.shape
    S = k.shape[2]
    logits = torch.einsum("bhld,bhsd->bhls", q, k) / math.sqrt(dk)

    keep = torch.ones(Bsz, 1, L, S, dtype=torch.bool, device=q.device)
    if key_padding_mask is not None:
        keep = keep & ~key_padding_mask.reshape(Bsz, 1, 1, S)
    if causal:
        keep = keep & torch.tril(torch.ones(L, S, dtype=torch.bool, device=q.device))

    logits = logits.masked_fill(~keep, torch.finfo(work).min)
    probs = logits.softmax(dim=-1) * keep          # blocked weights to exactly 0
    out = torch.einsum("bhls,bhsd->bhld", probs, v)
    return out.to(out_dtype)
