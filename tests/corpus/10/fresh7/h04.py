# expect: tiled_remainder_dropped
# bug-lines: 18
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.size(-2), key.size(-2)
    scale = query.size(-1) ** -0.5
    rows = []
    for i in range(0, L, block_size):
        q_blk = query[..., i:i + block_size, :] * scale
        n = q_blk.size(-2)
        m_i = torch.full_like(q_blk[..., :1], float("-inf"))
        l_i = torch.zeros_like(m_i)
        o_i = torch.zeros(*q_blk.shape[:-1], value.size(-1), dtype=value.dtype, device=value.device)
        for j in range(0, S - block_size + 1, block_size):
            if causal and j >= i + n:
                break
            k_blk = key[..., j:j + block_size, :]
            v_blk = value[..., j:j + block_size, :]
            s_ij = q_blk @ k_blk.transpose(-1, -2)
            if causal:
                qi = torch.arange(i, i + n, device=query.device).view(-1, 1)
                kj = torch.arange(j, j + k_blk.size(-2), device=query.device).view(1, -1)
                s_ij = s_ij.masked_fill(kj > qi, float("-inf"))
            m_new = torch.max(m_i, s_ij.max(dim=-1, keepdim=True).values)
            p_ij = (s_ij - m_new).exp()
            corr = (m_i - m_new).exp()
            l_i = corr * l_i + p_ij.sum(dim=-1, keepdim=True)
            o_i = corr * o_i + p_ij @ v_blk
            m_i = m_new
        rows.append(o_i / l_i)
    return torch.cat(rows, dim=-2)
