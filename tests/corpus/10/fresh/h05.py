# expect: tiled_remainder_dropped
# bug-lines: 19
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    scale = 1.0 / math.sqrt(d_k)
    outputs = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        bq = q.shape[2]
        m = torch.full((B, H, bq, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros((B, H, bq, 1), dtype=query.dtype, device=query.device)
        acc = torch.zeros((B, H, bq, value.shape[-1]), dtype=query.dtype, device=query.device)
        for j0 in range(0, S - block_size + 1, block_size):
            if causal and j0 > i0 + bq - 1:
                break
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = (q @ k.transpose(-2, -1)) * scale
            if causal:
                qi = torch.arange(i0, i0 + bq, device=q.device).view(-1, 1)
                kj = torch.arange(j0, j0 + k.shape[2], device=q.device).view(1, -1)
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            alpha = torch.exp(m - m_new)
            p = torch.exp(s - m_new)
            l = alpha * l + p.sum(-1, keepdim=True)
            acc = alpha * acc + p @ v
            m = m_new
        outputs.append(acc / l)
    return torch.cat(outputs, dim=2)
