# expect: online_softmax_no_rescale
# bug-lines: 31
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    scale = 1.0 / math.sqrt(d_k)
    out_blocks = []
    for i0 in range(0, L, block_size):
        i1 = min(i0 + block_size, L)
        q = query[:, :, i0:i1]
        m = torch.full((B, H, i1 - i0, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros_like(m)
        acc = torch.zeros((B, H, i1 - i0, value.shape[-1]), dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            j1 = min(j0 + block_size, S)
            if causal and j0 >= i1:
                continue
            s = (q @ key[:, :, j0:j1].transpose(-2, -1)) * scale
            if causal:
                rows = torch.arange(i0, i1, device=query.device).unsqueeze(1)
                cols = torch.arange(j0, j1, device=query.device).unsqueeze(0)
                s = s.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, s.max(dim=-1, keepdim=True).values)
            p = torch.exp(s - m_new)
            l = l * torch.exp(m - m_new) + p.sum(dim=-1, keepdim=True)
            acc = acc + p @ value[:, :, j0:j1]
            m = m_new
        out_blocks.append(acc / l)
    return torch.cat(out_blocks, dim=2)
