# expect: online_softmax_no_rescale
# held-out: rescales the running sum l by exp(m_old - m_new) but forgets to rescale the accumulator acc.
# bug-lines: 33
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = key.size(-2), value.size(-1)
    scale = 1.0 / math.sqrt(d_k)
    kw = dict(dtype=query.dtype, device=query.device)
    rows = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        bq = q.size(-2)
        m = torch.full((B, H, bq, 1), float("-inf"), **kw)
        l = torch.zeros(B, H, bq, 1, **kw)
        acc = torch.zeros(B, H, bq, d_v, **kw)
        stop = min(S, i0 + bq) if causal else S
        for j0 in range(0, stop, block_size):
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = q @ k.transpose(-2, -1) * scale
            if causal:
                qi = torch.arange(i0, i0 + bq, device=query.device)[:, None]
                kj = torch.arange(j0, j0 + k.size(-2), device=query.device)[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            l = l * torch.exp(m - m_new) + p.sum(dim=-1, keepdim=True)
            acc = acc + p @ v
            m = m_new
        rows.append(acc / l)
    return torch.cat(rows, dim=2)
