# expect: online_softmax_no_rescale
# bug-lines: 29
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d = query.shape
    S = key.size(2)
    outputs = []
    for qs in range(0, L, block_size):
        qe = min(qs + block_size, L)
        q_blk = query[:, :, qs:qe] / math.sqrt(d)
        m_i = torch.full((B, H, qe - qs, 1), -float("inf"), dtype=query.dtype, device=query.device)
        l_i = torch.zeros_like(m_i)
        o_i = torch.zeros(B, H, qe - qs, value.size(-1), dtype=query.dtype, device=query.device)
        for ks in range(0, S, block_size):
            ke = min(ks + block_size, S)
            if causal and ks >= qe:
                continue
            s_ij = q_blk @ key[:, :, ks:ke].transpose(-2, -1)
            if causal:
                future = torch.arange(ks, ke, device=query.device)[None, :] > torch.arange(qs, qe, device=query.device)[:, None]
                s_ij = s_ij.masked_fill(future, -float("inf"))
            m_new = torch.maximum(m_i, s_ij.max(dim=-1, keepdim=True).values)
            p_ij = torch.exp(s_ij - m_new)
            l_i = torch.exp(m_i - m_new) * l_i + p_ij.sum(dim=-1, keepdim=True)
            o_i = o_i + p_ij @ value[:, :, ks:ke]
            m_i = m_new
        outputs.append(o_i / l_i)
    return torch.cat(outputs, dim=2)
