# expect: pass
import math
import torch


def _blocked_positions(key_padding_mask, causal, L, S, device):
    """bool mask, True where a query may not attend; None if nothing is blocked."""
    blocked = None
    if causal:
        i = torch.arange(L, device=device).unsqueeze(1)
        j = torch.arange(S, device=device).unsqueeze(0)
        blocked = j > i                                   # (L, S)
    if key_padding_mask is not None:
        pad = key_padding_mask[:, None, None, :]          # (B, 1, 1, S)
        blocked = pad if blocked is None else (blocked | pad)
    return blocked


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    out_dtype = query.dtype
    work = torch.float64 if out_dtype == torch.float64 else torch.float32
    q, k, v = query.to(work), key.to(work), value.to(work)
    L, d_k = q.shape[-2], q.shape[-1]
    S = k.shape[-2]

    scores = torch.einsum("bhld,bhsd->bhls", q, k) * (1.0 / math.sqrt(d_k))
    blocked = _blocked_positions(key_padding_mask, causal, L, S, q.device)
    if blocked is not None:
        scores = scores.masked_fill(blocked, float("-inf"))

    # softmax by hand so that an empty row stays 0 instead of 0/0
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(scores - row_max)
    denom = e.sum(dim=-1, keepdim=True)
    denom = torch.where(denom > 0, denom, torch.ones_like(denom))
    weights = e / denom

    out = torch.einsum("bhls,bhsd->bhld", weights, v)
    return out.to(out_dtype)
