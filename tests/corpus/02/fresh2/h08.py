# expect: scale_not_sqrt
# also: softmax_wrong_dim
# bug-lines: 11, 14
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    L, d_k = query.shape[-2], query.shape[-1]
    S = key.shape[-2]
    s = query @ key.transpose(-2, -1)      # (..., L, S)
    s = s / d_k
    if mask is not None:
        s = s.masked_fill(mask, float("-inf"))
    w = torch.softmax(s, dim=-2)
    return w @ value, w
