# expect: pass
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = torch.einsum("...ld,...sd->...ls", query * d_k ** -0.5, key)
    if mask is not None:
        scores.masked_fill_(mask, float("-inf"))
    weights = scores.softmax(-1)
    output = torch.einsum("...ls,...sv->...lv", weights, value)
    return output, weights
