# expect: tiled_causal_diagonal
# bug-lines: 26
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.size(2)
    inv = d_k ** -0.5
    result = []
    for qs in range(0, L, block_size):
        q = query[:, :, qs:qs + block_size]
        bq = q.size(2)
        m = torch.full((B, H, bq, 1), -float("inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros((B, H, bq, 1), dtype=query.dtype, device=query.device)
        acc = torch.zeros((B, H, bq, value.size(-1)), dtype=query.dtype, device=query.device)
        for ks in range(0, S, block_size):
            # causal: key blocks that start after this query block are all in the future
            if causal and ks >= qs + bq:
                continue
            k = key[:, :, ks:ks + block_size]
            v = value[:, :, ks:ks + block_size]
            s = torch.einsum("bhqd,bhkd->bhqk", q, k) * inv
            m_new = torch.maximum(m, s.max(dim=-1, keepdim=True).values)
            p = torch.exp(s - m_new)
            scale_old = torch.exp(m - m_new)
            l = scale_old * l + p.sum(dim=-1, keepdim=True)
            acc = scale_old * acc + torch.einsum("bhqk,bhkd->bhqd", p, v)
            m = m_new
        result.append(acc / l)
    return torch.cat(result, dim=2)
