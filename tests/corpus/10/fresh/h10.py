# expect: tiled_causal_diagonal
# bug-lines: 27
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    scale = 1.0 / math.sqrt(d_k)
    result = []
    for qs in range(0, L, block_size):
        q = query[:, :, qs:qs + block_size] * scale
        bq = q.shape[2]
        m = q.new_full((B, H, bq, 1), float("-inf"))
        l = q.new_zeros((B, H, bq, 1))
        acc = q.new_zeros((B, H, bq, value.shape[-1]))
        for ks in range(0, S, block_size):
            if causal and ks > qs + bq - 1:
                break
            k = key[:, :, ks:ks + block_size]
            s = q @ k.transpose(-2, -1)
            if causal:
                r = torch.arange(bq, device=q.device)[:, None]
                c = torch.arange(k.shape[2], device=q.device)[None, :]
                s = s.masked_fill(c > r, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = (s - m_new).exp()
            corr = (m - m_new).exp()
            l = l * corr + p.sum(-1, keepdim=True)
            acc = acc * corr + p @ value[:, :, ks:ks + block_size]
            m = m_new
        result.append(acc / l)
    return torch.cat(result, dim=2)
