# expect: tiled_remainder_dropped
# bug-lines: 11
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.size(2), key.size(2)
    scale = query.size(-1) ** -0.5
    n_key_blocks = max(1, S // block_size)
    rows = []
    for i0 in range(0, L, block_size):
        qb = query[..., i0:i0 + block_size, :]
        n_q = qb.size(2)
        m = torch.full_like(qb[..., :1], float("-inf"))
        den = torch.zeros_like(qb[..., :1])
        num = torch.zeros(*qb.shape[:-1], value.size(-1), dtype=value.dtype, device=value.device)
        for jb in range(n_key_blocks):
            j0 = jb * block_size
            kb = key[..., j0:j0 + block_size, :]
            vb = value[..., j0:j0 + block_size, :]
            s = (qb @ kb.transpose(-2, -1)) * scale
            if causal:
                qi = torch.arange(i0, i0 + n_q, device=query.device).view(-1, 1)
                kj = torch.arange(j0, j0 + kb.size(2), device=query.device).view(1, -1)
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            m_safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            p = torch.exp(s - m_safe)
            c = torch.exp(m - m_safe)
            den = den * c + p.sum(-1, keepdim=True)
            num = num * c + p @ vb
            m = m_new
        rows.append(num / den)
    return torch.cat(rows, dim=-2)
