# expect: runtime_error
# issue 21: the mask is reshaped to the scores' full shape instead of broadcast, so a (L, S) mask for a batch raises; the call without a mask works. An exception only some inputs reach is reported as the exception, with its line.
# bug-lines: 12
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask.view(scores.shape), float("-inf"))
    weights = scores.softmax(dim=-1)
    return torch.matmul(weights, value), weights
