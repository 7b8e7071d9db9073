# expect: mask_device
# bug-lines: 27
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, dk = query.shape
    S = key.shape[2]
    dv = value.shape[3]
    scale = dk ** -0.5
    out = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        bq = q.size(2)
        m = torch.full((B, H, bq, 1), -math.inf, dtype=q.dtype, device=q.device)
        l = torch.zeros((B, H, bq, 1), dtype=q.dtype, device=q.device)
        acc = torch.zeros((B, H, bq, dv), dtype=q.dtype, device=q.device)
        for j0 in range(0, S, block_size):
            if causal and j0 > i0 + bq - 1:
                break
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = (q @ k.transpose(-2, -1)) * scale
            if causal:
                future = torch.arange(j0, j0 + k.size(2))[None, :] > torch.arange(i0, i0 + bq)[:, None]
                s = s.masked_fill(future, -math.inf)
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            c = torch.exp(m - m_new)
            l = c * l + p.sum(-1, keepdim=True)
            acc = c * acc + p @ v
            m = m_new
        out.append(acc / l)
    return torch.cat(out, dim=2)
