# attack: the full score matrix computed in a list subclass's __iter__, after the memory probe has ended -> fail (runtime_error)
# Invariant: a call's outputs are taken, by exact type, inside the largest-tensor probe (found by the eighth session's red team).
import math

import torch


def naive(query, key, value, causal):
    B, H, L, d = query.shape
    S = key.shape[-2]
    out = []
    for b in range(B):
        rows = []
        for h in range(H):
            s = (query[b, h] @ key[b, h].transpose(-2, -1)) / math.sqrt(d)  # full (L, S) scores
            if causal:
                blocked = torch.ones(L, S, dtype=torch.bool, device=s.device).triu(1)
                s = s.masked_fill(blocked, float("-inf"))
            rows.append(torch.softmax(s.float(), dim=-1).to(value.dtype) @ value[b, h])
        out.append(torch.stack(rows))
    return torch.stack(out)


class Later(list):
    def __iter__(self):
        yield naive(self[0], self[1], self[2], self[3])


def tiled_attention(query, key, value, causal=False, block_size=64):
    return Later([query, key, value, causal])
