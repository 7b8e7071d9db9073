# expect: pass
# held-out: correct; swaps the loops (key blocks outer, query blocks inner) and keeps per-query-block state in lists, normalising at the end.
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = key.size(2), value.size(3)
    q = query / math.sqrt(d_k)
    starts = list(range(0, L, block_size))
    ms, ls, accs = [], [], []
    for i0 in starts:
        n = min(block_size, L - i0)
        ms.append(torch.full((B, H, n, 1), float("-inf"), dtype=query.dtype, device=query.device))
        ls.append(torch.zeros(B, H, n, 1, dtype=query.dtype, device=query.device))
        accs.append(torch.zeros(B, H, n, d_v, dtype=query.dtype, device=query.device))
    for j0 in range(0, S, block_size):
        kb = key[:, :, j0:j0 + block_size]
        vb = value[:, :, j0:j0 + block_size]
        nk = kb.size(2)
        for idx, i0 in enumerate(starts):
            qb = q[:, :, i0:i0 + block_size]
            nq = qb.size(2)
            if causal and j0 > i0 + nq - 1:
                continue
            s = qb @ kb.transpose(-2, -1)
            if causal and j0 + nk - 1 > i0:
                rows = torch.arange(i0, i0 + nq, device=query.device)[:, None]
                cols = torch.arange(j0, j0 + nk, device=query.device)[None, :]
                s = s.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(ms[idx], s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            c = torch.exp(ms[idx] - m_new)
            ls[idx] = ls[idx] * c + p.sum(-1, keepdim=True)
            accs[idx] = accs[idx] * c + p @ vb
            ms[idx] = m_new
    return torch.cat([a / l for a, l in zip(accs, ls)], dim=2)
