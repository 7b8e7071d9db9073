# expect: runtime_error
# bug-lines: 14
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    if mask is not None:
        # the (row, column) pairs to block: as indices they address the first two axes of the scores, which are
        # (query, key) only for unbatched inputs; a batch raises here, for a batch of one too
        rows, cols = mask.nonzero(as_tuple=True)
        scores[rows, cols] = float("-inf")
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights
