# expect: tiled_remainder_dropped
# bug-lines: 13
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    d_v = value.shape[3]
    sm_scale = 1.0 / math.sqrt(d_k)
    n_kblocks = S // block_size
    out = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size] * sm_scale
        bq = q.shape[2]
        m = q.new_full((B, H, bq, 1), float("-inf"))
        l = q.new_zeros((B, H, bq, 1))
        acc = q.new_zeros((B, H, bq, d_v))
        for jb in range(n_kblocks):
            j0 = jb * block_size
            if causal and j0 >= i0 + bq:
                break
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = q @ k.transpose(-2, -1)
            if causal:
                qp = torch.arange(i0, i0 + bq, device=q.device)[:, None]
                kp = torch.arange(j0, j0 + block_size, device=q.device)[None, :]
                s = s.masked_fill(kp > qp, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            alpha = torch.exp(m - m_new)
            l = alpha * l + p.sum(-1, keepdim=True)
            acc = alpha * acc + p @ v
            m = m_new
        out.append(acc / l)
    return torch.cat(out, dim=2)
