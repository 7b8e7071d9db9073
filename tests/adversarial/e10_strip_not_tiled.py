# attack: softmax over block_size-query strips against all keys at once (a (block, S) strip fits the memory limit) instead of tiling -> fail (strip)
# Invariant: exercise 10's long case records the largest tensor the submission creates (a tile of scores
# at most) and compares every row of the output, so an untiled implementation fails with that reason.
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    d_k = query.size(-1)
    out = []
    for i0 in range(0, query.size(-2), block_size):
        s = query[:, :, i0 : i0 + block_size] @ key.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, block, S)
        if causal:
            qi = torch.arange(i0, i0 + s.size(-2), device=query.device)[:, None]
            kj = torch.arange(key.size(-2), device=query.device)[None, :]
            s = s.masked_fill(kj > qi, float("-inf"))
        out.append(torch.softmax(s, dim=-1) @ value)
    return torch.cat(out, dim=2)
