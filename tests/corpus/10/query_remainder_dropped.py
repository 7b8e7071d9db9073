# expect: tiled_remainder_dropped
# the query loop stops at the last full block: the last, shorter block of queries is never computed, so the output
# has fewer rows than the queries (the key loop is right).
# bug-lines: 14
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    L, S = query.size(-2), key.size(-2)
    scale = 1.0 / math.sqrt(query.size(-1))
    out = []
    for i0 in range(0, L - block_size + 1, block_size):
        q = query[..., i0:i0 + block_size, :] * scale
        m = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(*q.shape[:-1], value.size(-1), dtype=q.dtype, device=q.device)
        for j0 in range(0, S, block_size):
            if causal and j0 > i0 + q.size(-2) - 1:
                break
            k, v = key[..., j0:j0 + block_size, :], value[..., j0:j0 + block_size, :]
            s = q @ k.transpose(-2, -1)
            if causal:
                qi = torch.arange(i0, i0 + q.size(-2), device=q.device)[:, None]
                kj = torch.arange(j0, j0 + k.size(-2), device=q.device)[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            c = torch.exp(m - m_new)
            l = l * c + p.sum(-1, keepdim=True)
            acc = acc * c + p @ v
            m = m_new
        out.append(acc / l)
    return torch.cat(out, dim=-2)
