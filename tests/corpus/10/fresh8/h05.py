# expect: tiled_causal_diagonal
# bug-lines: 23
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, _ = query.shape
    S = key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1])
    out = torch.empty(B, H, L, value.shape[-1], dtype=query.dtype, device=query.device)

    for q0 in range(0, L, block_size):
        q1 = min(q0 + block_size, L)
        qb = query[:, :, q0:q1]
        m = torch.full((B, H, q1 - q0, 1), float("-inf"), dtype=query.dtype, device=query.device)
        den = torch.zeros_like(m)
        num = torch.zeros(B, H, q1 - q0, value.shape[-1], dtype=query.dtype, device=query.device)
        last_key = q1 if causal else S
        for k0 in range(0, last_key, block_size):
            k1 = min(k0 + block_size, last_key)
            s = qb @ key[:, :, k0:k1].transpose(-2, -1) * scale
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            w = torch.exp(s - m_new)
            c = torch.exp(m - m_new)
            den = den * c + w.sum(dim=-1, keepdim=True)
            num = num * c + w @ value[:, :, k0:k1]
            m = m_new
        out[:, :, q0:q1] = num / den
    return out
