# expect: tiled_causal_diagonal
# bug-lines: 25
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.size(2)
    scale = d_k ** -0.5
    blocks = []
    for i0 in range(0, L, block_size):
        q_blk = query[:, :, i0:i0 + block_size]
        bq = q_blk.size(2)
        m = torch.full((B, H, bq, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros((B, H, bq, 1), dtype=query.dtype, device=query.device)
        acc = torch.zeros((B, H, bq, value.size(-1)), dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            if causal and j0 >= i0 + bq:
                break
            k_blk = key[:, :, j0:j0 + block_size]
            v_blk = value[:, :, j0:j0 + block_size]
            s = torch.matmul(q_blk, k_blk.transpose(-2, -1)) * scale
            m_blk = s.amax(dim=-1, keepdim=True)
            m_new = torch.maximum(m, m_blk)
            p = torch.exp(s - m_new)
            c = torch.exp(m - m_new)
            l = c * l + p.sum(dim=-1, keepdim=True)
            acc = c * acc + torch.matmul(p, v_blk)
            m = m_new
        blocks.append(acc / l)
    return torch.cat(blocks, dim=2)
