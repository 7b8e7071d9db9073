# expect: scale_not_sqrt
# also: tiled_causal_diagonal
# bug-lines: 12, 29
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    scale = 1.0 / d_k
    dev = query.device
    pieces = []
    for start_q in range(0, L, block_size):
        q = query[:, :, start_q:start_q + block_size]
        n_q = q.shape[-2]
        m = torch.full((B, H, n_q, 1), -math.inf, dtype=query.dtype, device=dev)
        l = torch.zeros(B, H, n_q, 1, dtype=query.dtype, device=dev)
        acc = torch.zeros(B, H, n_q, value.shape[-1], dtype=query.dtype, device=dev)
        for start_k in range(0, S, block_size):
            if causal and start_k > start_q:
                break
            k = key[:, :, start_k:start_k + block_size]
            v = value[:, :, start_k:start_k + block_size]
            n_k = k.shape[-2]
            s = torch.matmul(q, k.transpose(-2, -1)) * scale
            if causal:
                local = torch.ones(n_q, n_k, dtype=torch.bool, device=dev).triu(1)
                s = s.masked_fill(local, -math.inf)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            l = l * corr + p.sum(dim=-1, keepdim=True)
            acc = acc * corr + p @ v
            m = m_new
        pieces.append(acc / l)
    return torch.cat(pieces, dim=2)
