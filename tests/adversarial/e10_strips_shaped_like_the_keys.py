# attack: softmax over strips of d query rows against all keys, (B, H, d, S): the shape of the transposed keys, so no shape rule tells it from them -> fail (scores_materialised)
# Invariant: exercise 10's long case follows the data from the query and the key (grader/sandbox/worker.py: ScoreFlow):
# a tensor computed from the queries that spans more than block_size keys at once is scores over too many keys, whatever its shape.
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    c = query.size(-1)
    kt = key.transpose(-2, -1)
    out = []
    for i0 in range(0, query.size(-2), c):
        s = query[:, :, i0:i0 + c] @ kt / math.sqrt(query.size(-1))  # (B, H, d, S)
        if causal:
            qi = torch.arange(i0, i0 + s.size(-2), device=query.device)[:, None]
            kj = torch.arange(key.size(-2), device=query.device)[None, :]
            s = s.masked_fill(kj > qi, float("-inf"))
        out.append(torch.softmax(s, dim=-1) @ value)
    return torch.cat(out, dim=2)
