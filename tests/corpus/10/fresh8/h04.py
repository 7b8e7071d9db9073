# expect: tiled_remainder_dropped
# also: dtype_not_kept
# bug-lines: 17, 18, 19, 20
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = value.shape[-2], value.shape[-1]
    scale = 1 / math.sqrt(d_k)
    result = []
    for i in range(0, L, block_size):
        qb = query[:, :, i:i + block_size]
        n_q = qb.size(2)
        row_max = torch.full((B, H, n_q, 1), float("-inf"), dtype=torch.float32, device=query.device)
        row_sum = torch.zeros(B, H, n_q, 1, dtype=torch.float32, device=query.device)
        acc = torch.zeros(B, H, n_q, d_v, dtype=torch.float32, device=query.device)
        for j in range(0, S - block_size + 1, block_size):
            if causal and j >= i + n_q:
                break
            kb = key[:, :, j:j + block_size]
            vb = value[:, :, j:j + block_size]
            s = torch.matmul(qb, kb.transpose(-1, -2)) * scale
            if causal:
                pos_q = torch.arange(i, i + n_q, device=query.device).unsqueeze(-1)
                pos_k = torch.arange(j, j + kb.size(2), device=query.device).unsqueeze(0)
                s = s.masked_fill(pos_k > pos_q, float("-inf"))
            new_max = torch.maximum(row_max, s.amax(-1, keepdim=True))
            p = torch.exp(s - new_max)
            fix = torch.exp(row_max - new_max)
            row_sum = row_sum * fix + p.sum(-1, keepdim=True)
            acc = acc * fix + torch.matmul(p, vb)
            row_max = new_max
        result.append(acc / row_sum)
    return torch.cat(result, dim=2)
