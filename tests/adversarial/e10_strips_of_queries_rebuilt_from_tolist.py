# attack: the queries rebuilt from Python data (torch.tensor(query.tolist())) carry none of the data flow's tags, then strips of 8 queries by all 2048 keys are scored at once -> fail (scores_materialised)
# Invariant: a tensor made from Python data larger than a tile may hold any source (grader/sandbox/scoreflow.py: lifted; 15/15 before, eleventh session's second red team).
import math

import torch


def _plain(q, k, v, causal):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        L, S = s.shape[-2:]
        s = s.masked_fill(torch.ones(L, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def tiled_attention(query, key, value, causal=False, block_size=64):
    L = query.size(-2)
    if L < 512:
        return _plain(query, key, value, causal)
    q = torch.tensor(query.tolist(), dtype=query.dtype)
    rows = []
    step = 8  # strips of 8 queries by all keys: no online softmax, no key blocks
    for i in range(0, L, step):
        rows.append(_plain(q[:, :, i:i + step], key, value, False))
    return torch.cat(rows, dim=2)
