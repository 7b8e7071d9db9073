# expect: pass
import math

import torch


def _block_update(state, s, v):
    """One online-softmax step: fold the scores s (.., bq, bk) of a key block into (m, l, acc)."""
    m, l, acc = state
    m_blk = s.max(dim=-1, keepdim=True).values
    m_new = torch.where(m_blk > m, m_blk, m)
    alpha = (m - m_new).exp()
    p = (s - m_new).exp()
    return m_new, alpha * l + p.sum(-1, keepdim=True), alpha * acc + torch.matmul(p, v)


def tiled_attention(query, key, value, causal=False, block_size=64):
    *lead, L, d_k = query.shape
    S, d_v = key.shape[-2], value.shape[-1]
    dev, dt = query.device, query.dtype
    inv_sqrt_d = d_k ** -0.5
    out = torch.empty(*lead, L, d_v, dtype=dt, device=dev)
    for qs in range(0, L, block_size):
        qe = min(qs + block_size, L)
        q_blk = query[..., qs:qe, :] * inv_sqrt_d
        state = (
            torch.full((*lead, qe - qs, 1), -math.inf, dtype=dt, device=dev),
            torch.zeros((*lead, qe - qs, 1), dtype=dt, device=dev),
            torch.zeros((*lead, qe - qs, d_v), dtype=dt, device=dev),
        )
        k_stop = min(S, qe) if causal else S      # keys after the last query of the block are never seen
        for ks in range(0, k_stop, block_size):
            ke = min(ks + block_size, k_stop)
            s = q_blk @ key[..., ks:ke, :].transpose(-1, -2)
            if causal and ke - 1 > qs:           # the block reaches past the first query: mask inside
                qi = torch.arange(qs, qe, device=dev).unsqueeze(-1)
                kj = torch.arange(ks, ke, device=dev).unsqueeze(0)
                s = s.masked_fill(kj > qi, -math.inf)
            state = _block_update(state, s, value[..., ks:ke, :])
        m, l, acc = state
        out[..., qs:qe, :] = acc / l
    return out
