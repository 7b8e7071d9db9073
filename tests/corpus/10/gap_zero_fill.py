# expect: mask_zero_fill
# bug-lines: 25
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, D = query.shape
    S = key.shape[-2]
    scale = D ** -0.5
    outs = []
    for qs in range(0, L, block_size):
        q = query[:, :, qs:qs + block_size] * scale
        n = q.shape[-2]
        m = torch.full((B, H, n, 1), float("-inf"), dtype=query.dtype, device=query.device)
        l = torch.zeros(B, H, n, 1, dtype=query.dtype, device=query.device)
        acc = torch.zeros(B, H, n, value.shape[-1], dtype=query.dtype, device=query.device)
        for ks in range(0, S, block_size):
            k, v = key[:, :, ks:ks + block_size], value[:, :, ks:ks + block_size]
            s = q @ k.transpose(-2, -1)
            if causal:
                qi = torch.arange(qs, qs + n, device=query.device).unsqueeze(1)
                kj = torch.arange(ks, ks + k.shape[-2], device=query.device).unsqueeze(0)
                s = torch.where(kj > qi, torch.zeros_like(s), s)  # zero, not -inf
            m2 = torch.maximum(m, s.amax(-1, keepdim=True))
            p = (s - m2).exp()
            corr = (m - m2).exp()
            l = l * corr + p.sum(-1, keepdim=True)
            acc = acc * corr + p @ v
            m = m2
        outs.append(acc / l)
    return torch.cat(outs, dim=-2)
