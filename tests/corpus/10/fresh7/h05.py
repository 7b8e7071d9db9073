# expect: runtime_error
# bug-lines: 24
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, D = query.shape
    S = key.shape[2]
    out_blocks = []
    for q0 in range(0, L, block_size):
        qb = query[:, :, q0:q0 + block_size]
        nq = qb.shape[2]
        qpos = torch.arange(q0, q0 + nq, device=query.device)
        m = qb.new_full((B, H, nq, 1), float("-inf"))
        l = qb.new_zeros((B, H, nq, 1))
        acc = qb.new_zeros((B, H, nq, value.shape[-1]))
        for k0 in range(0, S, block_size):
            if causal and k0 > q0 + nq - 1:
                break
            kb = key[:, :, k0:k0 + block_size]
            vb = value[:, :, k0:k0 + block_size]
            kpos = torch.arange(k0, k0 + block_size, device=query.device)
            s = torch.matmul(qb, kb.transpose(2, 3)) / math.sqrt(D)
            if causal:
                s = torch.where(kpos[None, :] > qpos[:, None], float("-inf"), s)
            m_next = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_next)
            c = torch.exp(m - m_next)
            l = c * l + p.sum(-1, keepdim=True)
            acc = c * acc + torch.matmul(p, vb)
            m = m_next
        out_blocks.append(acc / l)
    return torch.cat(out_blocks, dim=2)
