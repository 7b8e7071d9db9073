# expect: online_softmax_no_rescale
# bug-lines: 30
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, dk = query.shape
    S, dv = key.shape[2], value.shape[-1]
    out_blocks = []
    for i in range(0, L, block_size):
        Qi = query[:, :, i:i + block_size]
        bq = Qi.shape[2]
        m_i = Qi.new_full((B, H, bq, 1), float("-inf"))
        l_i = Qi.new_zeros((B, H, bq, 1))
        o_i = Qi.new_zeros((B, H, bq, dv))
        for j in range(0, S, block_size):
            Kj = key[:, :, j:j + block_size]
            Vj = value[:, :, j:j + block_size]
            S_ij = Qi @ Kj.transpose(-1, -2) / math.sqrt(dk)
            if causal:
                rows = torch.arange(i, i + bq, device=query.device).unsqueeze(1)
                cols = torch.arange(j, j + Kj.shape[2], device=query.device).unsqueeze(0)
                S_ij = S_ij.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m_i, S_ij.max(dim=-1, keepdim=True).values)
            P_ij = torch.exp(S_ij - m_new)
            alpha = torch.exp(m_i - m_new)
            l_i = alpha * l_i + P_ij.sum(dim=-1, keepdim=True)
            o_i = o_i + P_ij @ Vj
            m_i = m_new
        out_blocks.append(o_i / l_i)
    return torch.cat(out_blocks, dim=2)
