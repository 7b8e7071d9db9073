# expect: runtime_error
# bug-lines: 16, 17, 18
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    d_v = value.shape[3]
    scale = 1.0 / math.sqrt(d_k)
    result = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size] * scale
        m = torch.full((B, H, block_size, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros((B, H, block_size, 1), dtype=query.dtype, device=query.device)
        acc = torch.zeros((B, H, block_size, d_v), dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = q @ k.transpose(-2, -1)
            if causal:
                r = torch.arange(i0, i0 + q.shape[2], device=query.device)
                c = torch.arange(j0, j0 + k.shape[2], device=query.device)
                s = s.masked_fill(c[None, :] > r[:, None], float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            l = l * corr + p.sum(-1, keepdim=True)
            acc = acc * corr + p @ v
            m = m_new
        result.append(acc / l)
    return torch.cat(result, dim=2)
