# expect: pass
# held-out: correct; never skips key blocks, masks each block with absolute positions via torch.where, standard online softmax.
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    d_v = value.shape[3]
    sm_scale = 1.0 / math.sqrt(d_k)
    outs = []
    for qs in range(0, L, block_size):
        qb = query[:, :, qs:qs + block_size]
        nq = qb.shape[2]
        row_max = torch.full((B, H, nq, 1), float("-inf"), dtype=query.dtype, device=query.device)
        row_sum = torch.zeros((B, H, nq, 1), dtype=query.dtype, device=query.device)
        out = torch.zeros((B, H, nq, d_v), dtype=query.dtype, device=query.device)
        for ks in range(0, S, block_size):
            kb = key[:, :, ks:ks + block_size]
            vb = value[:, :, ks:ks + block_size]
            s = torch.matmul(qb, kb.transpose(-1, -2)) * sm_scale
            if causal:
                qi = torch.arange(qs, qs + nq, device=query.device).unsqueeze(1)
                kj = torch.arange(ks, ks + kb.shape[2], device=query.device).unsqueeze(0)
                s = torch.where(kj <= qi, s, torch.full_like(s, float("-inf")))
            new_max = torch.maximum(row_max, s.amax(dim=-1, keepdim=True))
            alpha = torch.exp(row_max - new_max)
            p = torch.exp(s - new_max)
            row_sum = alpha * row_sum + p.sum(dim=-1, keepdim=True)
            out = alpha * out + torch.matmul(p, vb)
            row_max = new_max
        outs.append(out / row_sum)
    return torch.cat(outs, dim=2)
