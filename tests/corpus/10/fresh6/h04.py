# expect: tiled_remainder_dropped
# bug-lines: 9
import math

import torch


def block_starts(n, size):
    return range(0, n - size + 1, size)


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, dk = query.shape
    S, dv = value.shape[-2], value.shape[-1]
    inv_sqrt = 1.0 / math.sqrt(dk)
    result = []
    for i in block_starts(L, block_size):
        qb = query[:, :, i:i + block_size] * inv_sqrt
        nq = qb.size(2)
        run_max = torch.full((B, H, nq, 1), -math.inf, dtype=query.dtype, device=query.device)
        run_sum = torch.zeros(B, H, nq, 1, dtype=query.dtype, device=query.device)
        run_acc = torch.zeros(B, H, nq, dv, dtype=query.dtype, device=query.device)
        for j in block_starts(S, block_size):
            if causal and j > i + nq - 1:
                continue
            kb = key[:, :, j:j + block_size]
            vb = value[:, :, j:j + block_size]
            s = qb @ kb.transpose(-2, -1)
            if causal:
                future = (torch.arange(j, j + kb.size(2), device=s.device)[None, :]
                          > torch.arange(i, i + nq, device=s.device)[:, None])
                s = s.masked_fill(future, -math.inf)
            new_max = torch.maximum(run_max, s.amax(-1, keepdim=True))
            alpha = torch.exp(run_max - new_max)
            p = torch.exp(s - new_max)
            run_sum = alpha * run_sum + p.sum(-1, keepdim=True)
            run_acc = alpha * run_acc + p @ vb
            run_max = new_max
        result.append(run_acc / run_sum)
    return torch.cat(result, dim=2)
