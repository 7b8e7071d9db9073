# expect: no_scaling
# also: runtime_error
# bug-lines: 9, 10
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    """Written for a caller that always passes a mask; the scale was forgotten as well."""
    logits = torch.einsum("...ld,...sd->...ls", query, key)
    keep = mask.logical_not().to(logits.dtype)
    logits = logits + torch.log(keep)
    weights = logits.softmax(dim=-1)
    return torch.einsum("...ls,...sd->...ld", weights, value), weights
