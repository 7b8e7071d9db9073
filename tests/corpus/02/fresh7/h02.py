# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V, with True in `mask` meaning blocked."""
    scale = query.shape[-1] ** -0.5
    logits = torch.einsum("...ld,...sd->...ls", query * scale, key)
    if mask is not None:
        neg_inf = torch.tensor(float("-inf"), dtype=logits.dtype, device=logits.device)
        logits = torch.where(mask, neg_inf, logits)
    # numerically stable softmax over the keys
    row_max = logits.max(dim=-1, keepdim=True).values
    unnorm = (logits - row_max).exp()
    weights = unnorm / unnorm.sum(dim=-1, keepdim=True)
    return torch.einsum("...ls,...sv->...lv", weights, value), weights
