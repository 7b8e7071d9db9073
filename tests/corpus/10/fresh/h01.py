# expect: pass
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    d_v = value.shape[-1]
    scale = 1.0 / math.sqrt(d_k)
    outs = []
    for i0 in range(0, L, block_size):
        i1 = min(i0 + block_size, L)
        q = query[:, :, i0:i1] * scale
        m = torch.full((B, H, i1 - i0, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros((B, H, i1 - i0, 1), dtype=query.dtype, device=query.device)
        acc = torch.zeros((B, H, i1 - i0, d_v), dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            if causal and j0 > i1 - 1:
                break  # every key from here on is in the future of every query of the block
            j1 = min(j0 + block_size, S)
            s = q @ key[:, :, j0:j1].transpose(-2, -1)
            if causal and j1 - 1 > i0:
                qi = torch.arange(i0, i1, device=query.device)[:, None]
                kj = torch.arange(j0, j1, device=query.device)[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            l = l * corr + p.sum(dim=-1, keepdim=True)
            acc = acc * corr + p @ value[:, :, j0:j1]
            m = m_new
        outs.append(acc / l)
    return torch.cat(outs, dim=2)
