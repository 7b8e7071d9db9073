# expect: tiled_causal_diagonal
# bug-lines: 27
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, dk = query.shape
    S = key.shape[2]
    dv = value.shape[3]
    out = torch.empty(B, H, L, dv, dtype=query.dtype, device=query.device)
    for i in range(0, L, block_size):
        q = query[:, :, i:i + block_size]
        nq = q.shape[2]
        m = torch.full((B, H, nq, 1), -float("inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros(B, H, nq, 1, dtype=query.dtype, device=query.device)
        acc = torch.zeros(B, H, nq, dv, dtype=query.dtype, device=query.device)
        for j in range(0, S, block_size):
            if causal and j > i + nq - 1:
                break
            k = key[:, :, j:j + block_size]
            v = value[:, :, j:j + block_size]
            nk = k.shape[2]
            s = q @ k.transpose(-2, -1) / math.sqrt(dk)
            if causal:
                future = torch.ones(nq, nk, dtype=torch.bool, device=query.device).triu(1)
                s = s.masked_fill(future, -float("inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = (s - m_new).exp()
            scale_old = (m - m_new).exp()
            l = scale_old * l + p.sum(-1, keepdim=True)
            acc = scale_old * acc + p @ v
            m = m_new
        out[:, :, i:i + nq] = acc / l
    return out
