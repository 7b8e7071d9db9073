# expect: tiled_remainder_dropped
# bug-lines: 22
import math

import torch


def _online_block(q, k, v, m, l, acc, mask=None):
    s = torch.matmul(q, k.transpose(-2, -1))
    if mask is not None:
        s = s.masked_fill(mask, float("-inf"))
    m_new = torch.maximum(m, s.amax(-1, keepdim=True))
    p = torch.exp(s - m_new)
    c = torch.exp(m - m_new)
    return m_new, l * c + p.sum(-1, keepdim=True), acc * c + torch.matmul(p, v)


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    q_all = query / math.sqrt(d_k)
    n_q = L // block_size
    n_k = (S + block_size - 1) // block_size
    rows = []
    for bi in range(n_q):
        q0, q1 = bi * block_size, min((bi + 1) * block_size, L)
        q = q_all[:, :, q0:q1]
        m = torch.full(q.shape[:-1] + (1,), -math.inf, dtype=q.dtype, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(*q.shape[:-1], value.shape[-1], dtype=q.dtype, device=q.device)
        for bj in range(n_k):
            k0, k1 = bj * block_size, min((bj + 1) * block_size, S)
            mask = None
            if causal:
                if k0 >= q1:
                    break
                qi = torch.arange(q0, q1, device=q.device)
                kj = torch.arange(k0, k1, device=q.device)
                mask = kj[None, :] > qi[:, None]
            m, l, acc = _online_block(q, key[:, :, k0:k1], value[:, :, k0:k1], m, l, acc, mask)
        rows.append(acc / l)
    return torch.cat(rows, dim=2)
