# expect: tiled_causal_diagonal
# also: dtype_not_kept
# bug-lines: 26, 27, 28, 34
import math

import torch


def _update(state, s, v):
    m, l, acc = state
    m_new = torch.maximum(m, s.amax(-1, keepdim=True))
    p = torch.exp(s - m_new)
    r = torch.exp(m - m_new)
    return m_new, l * r + p.sum(-1, keepdim=True), acc * r + p @ v


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    scale = 1.0 / math.sqrt(d_k)
    rows = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        bq = q.shape[2]
        state = (
            torch.full((B, H, bq, 1), float("-inf"), device=query.device),
            torch.zeros(B, H, bq, 1, device=query.device),
            torch.zeros(B, H, bq, value.shape[-1], device=query.device),
        )
        for j0 in range(0, S, block_size):
            if causal and j0 > i0 + bq - 1:
                break
            s = q @ key[:, :, j0:j0 + block_size].transpose(-2, -1) * scale
            state = _update(state, s, value[:, :, j0:j0 + block_size])
        m, l, acc = state
        rows.append(acc / l)
    return torch.cat(rows, dim=2)
