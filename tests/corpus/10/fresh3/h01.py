# expect: pass
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    d_v = value.shape[-1]
    scale = 1.0 / math.sqrt(d_k)
    outputs = []
    for qs in range(0, L, block_size):
        qe = min(qs + block_size, L)
        q = query[:, :, qs:qe].float() * scale
        bq = qe - qs
        m = torch.full((B, H, bq, 1), float("-inf"), device=query.device)
        l = torch.zeros(B, H, bq, 1, device=query.device)
        acc = torch.zeros(B, H, bq, d_v, device=query.device)
        for ks in range(0, S, block_size):
            ke = min(ks + block_size, S)
            if causal and ks > qe - 1:
                break
            k = key[:, :, ks:ke].float()
            v = value[:, :, ks:ke].float()
            s = q @ k.transpose(-2, -1)
            if causal:
                qi = torch.arange(qs, qe, device=query.device)[:, None]
                kj = torch.arange(ks, ke, device=query.device)[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            l = l * corr + p.sum(dim=-1, keepdim=True)
            acc = acc * corr + p @ v
            m = m_new
        outputs.append(acc / l)
    return torch.cat(outputs, dim=2).to(query.dtype)
