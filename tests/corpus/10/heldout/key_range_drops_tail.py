# expect: tiled_remainder_dropped
# held-out: loops over key blocks with range(0, S - block_size + 1, block_size), so the last, shorter key block is never visited.
# bug-lines: 21
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = key.size(-2), value.size(-1)
    scale = 1.0 / math.sqrt(d_k)
    kw = dict(dtype=query.dtype, device=query.device)
    rows = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size] * scale
        bq = q.size(-2)
        m = torch.full((B, H, bq, 1), float("-inf"), **kw)
        l = torch.zeros(B, H, bq, 1, **kw)
        acc = torch.zeros(B, H, bq, d_v, **kw)
        for j0 in range(0, S - block_size + 1, block_size):
            if causal and j0 > i0 + bq - 1:
                break
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = q @ k.transpose(-2, -1)
            if causal:
                qi = torch.arange(i0, i0 + bq, device=query.device)[:, None]
                kj = torch.arange(j0, j0 + k.size(-2), device=query.device)[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            l = l * corr + p.sum(dim=-1, keepdim=True)
            acc = acc * corr + p @ v
            m = m_new
        rows.append(acc / l)
    return torch.cat(rows, dim=2)
