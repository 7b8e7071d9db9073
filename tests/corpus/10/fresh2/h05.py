# expect: online_softmax_no_rescale
# bug-lines: 33
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d = query.shape
    S = key.shape[-2]
    dv = value.shape[-1]
    scale = math.sqrt(d)
    result = []
    for qi in range(0, L, block_size):
        q = query[:, :, qi:qi + block_size, :]
        nq = q.shape[-2]
        m = torch.full((B, H, nq, 1), -torch.inf, dtype=query.dtype, device=query.device)
        l = torch.zeros(B, H, nq, 1, dtype=query.dtype, device=query.device)
        acc = torch.zeros(B, H, nq, dv, dtype=query.dtype, device=query.device)
        for kj in range(0, S, block_size):
            if causal and kj >= qi + nq:
                continue
            k = key[:, :, kj:kj + block_size, :]
            v = value[:, :, kj:kj + block_size, :]
            s = q @ k.transpose(-1, -2) / scale
            if causal:
                future = (torch.arange(kj, kj + k.shape[-2], device=q.device)[None, :]
                          > torch.arange(qi, qi + nq, device=q.device)[:, None])
                s = s.masked_fill(future, -torch.inf)
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            l = l * torch.exp(m - m_new) + p.sum(-1, keepdim=True)
            acc = acc + p @ v
            m = m_new
        result.append(acc / l)
    return torch.cat(result, dim=-2)
