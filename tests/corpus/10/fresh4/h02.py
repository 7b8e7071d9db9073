# expect: tiled_remainder_dropped
# bug-lines: 13
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.size(2)
    scale = d_k ** -0.5
    out = torch.empty(B, H, L, value.size(-1), dtype=query.dtype, device=query.device)
    num_k_blocks = S // block_size
    for i0 in range(0, L, block_size):
        i1 = min(i0 + block_size, L)
        q_blk = query[:, :, i0:i1]
        m = torch.full((B, H, i1 - i0, 1), -float("inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(B, H, i1 - i0, value.size(-1), dtype=query.dtype, device=query.device)
        for jb in range(num_k_blocks):
            j0, j1 = jb * block_size, (jb + 1) * block_size
            if causal and j0 >= i1:
                continue
            s = q_blk @ key[:, :, j0:j1].transpose(-2, -1) * scale
            if causal:
                qi = torch.arange(i0, i1, device=query.device).view(-1, 1)
                kj = torch.arange(j0, j1, device=query.device).view(1, -1)
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.max(dim=-1, keepdim=True).values)
            p = torch.exp(s - m_new)
            c = torch.exp(m - m_new)
            l = c * l + p.sum(-1, keepdim=True)
            acc = c * acc + p @ value[:, :, j0:j1]
            m = m_new
        out[:, :, i0:i1] = acc / l
    return out
