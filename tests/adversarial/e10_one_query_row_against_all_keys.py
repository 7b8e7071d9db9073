# attack: one query row at a time (selected, so no query dimension is left) against all keys: (B, H, S) scores, smaller than the output -> fail (scores_materialised)
# Invariant: a score tensor is recognised by what it was computed from (the queries and more than block_size keys
# along one of its dimensions), not by a query dimension it may no longer have.
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    rows = []
    for i in range(query.size(-2)):
        s = (query[:, :, i, None, :] @ key.transpose(-2, -1)).squeeze(-2) / math.sqrt(query.size(-1))  # (B, H, S)
        if causal:
            s = s.masked_fill(torch.arange(key.size(-2), device=query.device) > i, float("-inf"))
        rows.append((torch.softmax(s, dim=-1)[..., None, :] @ value))
    return torch.cat(rows, dim=2)
