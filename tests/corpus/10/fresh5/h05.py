# expect: scores_materialised
# bug-lines: 22
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.shape[-2], key.shape[-2]
    inv = 1.0 / math.sqrt(query.shape[-1])
    result = []
    for i0 in range(0, L, block_size):
        q = query[..., i0:i0 + block_size, :]
        tiles = []
        for j0 in range(0, S, block_size):
            s = (q @ key[..., j0:j0 + block_size, :].transpose(-2, -1)) * inv
            if causal:
                r = torch.arange(i0, i0 + q.shape[-2], device=q.device)[:, None]
                c = torch.arange(j0, j0 + s.shape[-1], device=q.device)[None, :]
                s = s.masked_fill(c > r, float("-inf"))
            tiles.append(s)
        row = torch.cat(tiles, dim=-1)
        w = torch.softmax(row, dim=-1)
        result.append(w @ value)
    return torch.cat(result, dim=-2)
