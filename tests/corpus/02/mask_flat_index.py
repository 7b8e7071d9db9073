# expect: runtime_error
# bug-lines: 14
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    if mask is not None:
        # flatten both and block the masked entries: the flat mask covers one (L, S) matrix, the flat scores the
        # whole batch, so this only runs for unbatched inputs
        flat = scores.reshape(-1)
        flat[mask.reshape(-1)] = float("-inf")
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights
