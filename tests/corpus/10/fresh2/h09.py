# expect: tiled_causal_diagonal
# bug-lines: 24, 25
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    scale = 1 / math.sqrt(d_k)
    chunks = []
    for i0 in range(0, L, block_size):
        i1 = min(i0 + block_size, L)
        q = query[:, :, i0:i1]
        m = torch.full((B, H, i1 - i0, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(B, H, i1 - i0, value.shape[-1], dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            j1 = min(j0 + block_size, S)
            # causal: a key block that starts after the last query is all future, skip it
            if causal and j0 >= i1:
                continue
            s = torch.matmul(q, key[:, :, j0:j1].transpose(-2, -1)) * scale
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            l = l * corr + p.sum(-1, keepdim=True)
            acc = acc * corr + torch.matmul(p, value[:, :, j0:j1])
            m = m_new
        chunks.append(acc / l)
    return torch.cat(chunks, dim=2)
