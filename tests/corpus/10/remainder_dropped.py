# expect: tiled_remainder_dropped
# bug-lines: 20, 21
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = key.size(-2), value.size(-1)
    scale = 1.0 / math.sqrt(d_k)
    kw = dict(dtype=query.dtype, device=query.device)
    rows = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0 : i0 + block_size] * scale  # (B, H, bq, d_k), one block of queries
        bq = q.size(-2)
        m = torch.full((B, H, bq, 1), float("-inf"), **kw)  # running max of each query's scores
        l = torch.zeros(B, H, bq, 1, **kw)  # running sum of exp(score - m)
        acc = torch.zeros(B, H, bq, d_v, **kw)  # running sum of exp(score - m) * value
        stop = min(S, i0 + block_size) if causal else S  # causal: keys after this block's last query are all future
        for j0 in range(0, stop - block_size + 1, block_size):
            k = key[:, :, j0 : j0 + block_size]  # (B, H, bk, d_k)
            v = value[:, :, j0 : j0 + block_size]  # (B, H, bk, d_v)
            s = q @ k.transpose(-2, -1)  # (B, H, bq, bk): the only scores that exist at any time
            if causal and j0 + k.size(-2) - 1 > i0:  # this key block reaches past the first query: mask inside it
                qi = torch.arange(i0, i0 + bq, device=query.device)[:, None]
                kj = torch.arange(j0, j0 + k.size(-2), device=query.device)[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (B, H, bq, 1)
            p = torch.exp(s - m_new)  # (B, H, bq, bk), at most 1: no overflow
            correction = torch.exp(m - m_new)  # what was summed under the old max, rescaled to the new one
            l = l * correction + p.sum(dim=-1, keepdim=True)
            acc = acc * correction + p @ v  # (B, H, bq, d_v)
            m = m_new
        rows.append(acc / l)  # normalise once, at the end
    return torch.cat(rows, dim=2)  # (B, H, L, d_v)
