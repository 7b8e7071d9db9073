# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    L, d_k = query.shape[-2:]
    S, d_v = value.shape[-2:]
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    q = query.expand(*batch, L, d_k).reshape(-1, L, d_k)
    k = key.expand(*batch, S, d_k).reshape(-1, S, d_k)
    v = value.expand(*batch, S, d_v).reshape(-1, S, d_v)
    # baddbmm: beta * bias + alpha * (q @ k^T); the bias carries the mask as 0 / -inf
    bias = torch.zeros(q.shape[0], L, S, dtype=q.dtype, device=q.device)
    if mask is not None:
        blocked = mask.expand(*batch, L, S).reshape(-1, L, S)
        bias = bias.masked_fill(blocked, float("-inf"))
    scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=1.0 / math.sqrt(d_k))
    weights = torch.softmax(scores, dim=-1)
    out = torch.bmm(weights, v)
    return out.reshape(*batch, L, d_v), weights.reshape(*batch, L, S)
