# expect: online_softmax_overflow
# bug-lines: 29, 30
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    d_v = value.shape[-1]
    sm_scale = 1 / math.sqrt(d_k)
    out = []
    for start_q in range(0, L, block_size):
        end_q = min(start_q + block_size, L)
        q = query[:, :, start_q:end_q]
        m_i = torch.full((B, H, end_q - start_q, 1), -torch.inf, dtype=query.dtype, device=query.device)
        l_i = torch.zeros_like(m_i)
        o_i = torch.zeros((B, H, end_q - start_q, d_v), dtype=query.dtype, device=query.device)
        last_k = end_q if causal else S
        for start_k in range(0, last_k, block_size):
            end_k = min(start_k + block_size, last_k)
            s = q @ key[:, :, start_k:end_k].transpose(-2, -1) * sm_scale
            if causal:
                q_idx = torch.arange(start_q, end_q, device=s.device)
                k_idx = torch.arange(start_k, end_k, device=s.device)
                s = s.masked_fill(k_idx[None, :] > q_idx[:, None], -torch.inf)
            m_new = torch.maximum(m_i, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s) / torch.exp(m_new)
            alpha = torch.exp(m_i) / torch.exp(m_new)
            l_i = l_i * alpha + p.sum(dim=-1, keepdim=True)
            o_i = o_i * alpha + p @ value[:, :, start_k:end_k]
            m_i = m_new
        out.append(o_i / l_i)
    return torch.cat(out, dim=2)
