# expect: pass
"""softmax(Q K^T / sqrt(d_k)) V, scaling the queries first and masking with torch.where."""
import torch


def _blocked(scores, mask):
    neg_inf = torch.full_like(scores, float("-inf"))
    return torch.where(mask, neg_inf, scores)


def scaled_dot_product_attention(query, key, value, mask=None):
    *_, d_k = query.shape
    q = query * d_k ** -0.5
    logits = torch.einsum("...ld,...sd->...ls", q, key)
    if mask is not None:
        logits = _blocked(logits, mask)
    # subtract the row max by hand, then normalise
    logits = logits - logits.amax(dim=-1, keepdim=True)
    e = logits.exp()
    attn = e / e.sum(dim=-1, keepdim=True)
    return torch.einsum("...ls,...sd->...ld", attn, value), attn
