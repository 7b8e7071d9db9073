# expect: online_softmax_block_average
# bug-lines: 24,27
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    results = []
    for i0 in range(0, L, block_size):
        i1 = min(i0 + block_size, L)
        q = query[:, :, i0:i1]
        partial = []
        for j0 in range(0, S, block_size):
            j1 = min(j0 + block_size, S)
            if causal and j0 >= i1:
                break
            s = q @ key[:, :, j0:j1].transpose(-2, -1) / math.sqrt(d_k)
            if causal:
                future = torch.arange(j0, j1, device=q.device)[None, :] > torch.arange(i0, i1, device=q.device)[:, None]
                s = s.masked_fill(future, float("-inf"))
            w = torch.softmax(s, dim=-1)
            w = torch.nan_to_num(w, nan=0.0)
            partial.append(w @ value[:, :, j0:j1])
        results.append(torch.stack(partial, dim=0).mean(dim=0))
    return torch.cat(results, dim=2)
