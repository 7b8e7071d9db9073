# expect: runtime_error
# also: no_scaling
# bug-lines: 8, 12
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.einsum("bld,bsd->bls", query, key)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    output = torch.einsum("bls,bsd->bld", weights, value)
    return output, weights
