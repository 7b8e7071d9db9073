# expect: tiled_causal_diagonal
# bug-lines: 20
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d = query.shape
    S = key.shape[2]
    sm_scale = 1.0 / math.sqrt(d)
    o = []
    for start_q in range(0, L, block_size):
        end_q = min(start_q + block_size, L)
        q = query[:, :, start_q:end_q]
        m_i = torch.full((B, H, end_q - start_q, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l_i = torch.zeros_like(m_i)
        acc = torch.zeros((B, H, end_q - start_q, value.shape[-1]), dtype=query.dtype, device=query.device)
        # causal: keys up to the last query of this block
        end_k = min(end_q, S) if causal else S
        for start_k in range(0, end_k, block_size):
            stop_k = min(start_k + block_size, end_k)
            qk = torch.matmul(q, key[:, :, start_k:stop_k].transpose(-2, -1)) * sm_scale
            m_ij = torch.maximum(m_i, qk.amax(dim=-1, keepdim=True))
            p = torch.exp(qk - m_ij)
            alpha = torch.exp(m_i - m_ij)
            l_i = l_i * alpha + p.sum(dim=-1, keepdim=True)
            acc = acc * alpha + torch.matmul(p, value[:, :, start_k:stop_k])
            m_i = m_ij
        o.append(acc / l_i)
    return torch.cat(o, dim=2)
