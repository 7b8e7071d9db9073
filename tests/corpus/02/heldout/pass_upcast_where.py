# expect: pass
# held-out: correct; torch.where with -inf for the blocked scores and a softmax upcast to float32 then cast back to the query dtype.
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = torch.where(mask, torch.full_like(scores, float("-inf")), scores)
    weights = torch.softmax(scores.float(), dim=-1).to(query.dtype)
    output = torch.matmul(weights, value)
    return output, weights
