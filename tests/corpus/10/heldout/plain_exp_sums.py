# expect: online_softmax_overflow
# held-out: skips the running max ("softmax is just exp / sum"): accumulates exp(s) and sum(exp(s)) directly, so large scores overflow.
# bug-lines: 27, 28, 29
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = key.size(-2), value.size(-1)
    scale = 1.0 / math.sqrt(d_k)
    out_blocks = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        bq = q.size(-2)
        denom = torch.zeros(B, H, bq, 1, dtype=query.dtype, device=query.device)
        numer = torch.zeros(B, H, bq, d_v, dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = (q @ k.transpose(-2, -1)) * scale
            if causal:
                qi = torch.arange(i0, i0 + bq, device=query.device)[:, None]
                kj = torch.arange(j0, j0 + k.size(-2), device=query.device)[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            p = torch.exp(s)
            denom = denom + p.sum(dim=-1, keepdim=True)
            numer = numer + p @ v
        out_blocks.append(numer / denom)
    return torch.cat(out_blocks, dim=2)
