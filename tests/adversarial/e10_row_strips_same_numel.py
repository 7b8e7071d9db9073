# attack: no tiling of the keys and no online softmax: softmax over strips of c query rows against all keys, with c = block_size**2 // S so that no strip has more elements than one (block, block) tile -> fail (scores_materialised)
# Invariant: exercise 10's memory check bounds the shape of a score tile, not only its element count (found by
# the red-team round of issue 19): a tensor wider than a block in one of its last two dims and than d in the other is a strip.
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.size(-2), key.size(-2)
    c = max(1, (block_size * block_size) // S)
    out = []
    for i0 in range(0, L, c):
        s = query[:, :, i0:i0 + c] @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
        if causal:
            qi = torch.arange(i0, i0 + s.size(-2), device=query.device)[:, None]
            kj = torch.arange(S, device=query.device)[None, :]
            s = s.masked_fill(kj > qi, float("-inf"))
        out.append(torch.softmax(s, dim=-1) @ value)
    return torch.cat(out, dim=2)
