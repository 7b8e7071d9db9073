# expect: pass
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    d_v = value.shape[3]
    scale = 1.0 / math.sqrt(d_k)
    out_blocks = []

    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        bq = q.shape[2]
        m = torch.full((B, H, bq, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros((B, H, bq, 1), dtype=query.dtype, device=query.device)
        acc = torch.zeros((B, H, bq, d_v), dtype=query.dtype, device=query.device)

        for j0 in range(0, S, block_size):
            if causal and j0 > i0 + bq - 1:
                break
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = (q @ k.transpose(-2, -1)) * scale
            if causal and j0 + k.shape[2] - 1 > i0:
                rows = torch.arange(i0, i0 + bq, device=query.device)[:, None]
                cols = torch.arange(j0, j0 + k.shape[2], device=query.device)[None, :]
                s = s.masked_fill(cols > rows, float("-inf"))

            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            correction = torch.exp(m - m_new)
            l = l * correction + p.sum(dim=-1, keepdim=True)
            acc = acc * correction + p @ v
            m = m_new

        out_blocks.append(acc / l)

    return torch.cat(out_blocks, dim=2)
