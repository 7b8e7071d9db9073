# expect: scores_materialised
# held-out: computes the whole (B, H, L, S) score matrix up front and only runs the online softmax over slices of it.
# bug-lines: 12
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = key.size(-2), value.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if causal:
        future = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    kw = dict(dtype=query.dtype, device=query.device)
    rows = []
    for i0 in range(0, L, block_size):
        bq = min(block_size, L - i0)
        m = torch.full((B, H, bq, 1), float("-inf"), **kw)
        l = torch.zeros(B, H, bq, 1, **kw)
        acc = torch.zeros(B, H, bq, d_v, **kw)
        for j0 in range(0, S, block_size):
            s = scores[:, :, i0:i0 + block_size, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            l = l * corr + p.sum(dim=-1, keepdim=True)
            acc = acc * corr + p @ v
            m = m_new
        rows.append(acc / l)
    return torch.cat(rows, dim=2)
