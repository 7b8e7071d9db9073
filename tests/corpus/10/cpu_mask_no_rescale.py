# expect: mask_device
# also: online_softmax_no_rescale
# bug-lines: 21, 22, 27
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = key.shape[-2], value.shape[-1]
    out = torch.zeros(B, H, L, d_v, dtype=query.dtype, device=query.device)
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size] / math.sqrt(d_k)
        m = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(q.shape[:-1] + (d_v,), dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            s = q @ key[:, :, j0:j0 + block_size].transpose(-2, -1)
            if causal:
                rows = torch.arange(i0, i0 + q.size(-2))[:, None]
                cols = torch.arange(j0, j0 + s.size(-1))[None, :]
                s = s.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            correction = torch.exp(m - m_new)
            l = l + p.sum(-1, keepdim=True)
            acc = acc * correction + p @ value[:, :, j0:j0 + block_size]
            m = m_new
        out[:, :, i0:i0 + block_size] = acc / l
    return out
