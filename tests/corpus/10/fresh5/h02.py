# expect: online_softmax_no_rescale
# bug-lines: 16
import math

import torch


def _online_block(q, k, v, m, l, acc, bias=None):
    s = torch.matmul(q, k.transpose(-1, -2))
    if bias is not None:
        s = s + bias
    block_max = s.max(dim=-1, keepdim=True).values
    m_new = torch.maximum(m, block_max)
    alpha = torch.exp(m - m_new)
    p = torch.exp(s - m_new)
    l = l + p.sum(dim=-1, keepdim=True)
    acc = alpha * acc + torch.matmul(p, v)
    return m_new, l, acc


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, D = query.shape
    S, Dv = key.shape[-2], value.shape[-1]
    q_all = query / math.sqrt(D)
    out = []
    for qs in range(0, L, block_size):
        qe = min(qs + block_size, L)
        q = q_all[:, :, qs:qe]
        m = q.new_full((B, H, qe - qs, 1), -math.inf)
        l = q.new_zeros((B, H, qe - qs, 1))
        acc = q.new_zeros((B, H, qe - qs, Dv))
        for ks in range(0, S, block_size):
            ke = min(ks + block_size, S)
            if causal and ks >= qe:
                continue
            bias = None
            if causal:
                qi = torch.arange(qs, qe, device=query.device).unsqueeze(-1)
                kj = torch.arange(ks, ke, device=query.device).unsqueeze(0)
                bias = torch.zeros(qe - qs, ke - ks, dtype=query.dtype, device=query.device)
                bias = bias.masked_fill(kj > qi, -math.inf)
            m, l, acc = _online_block(q, key[:, :, ks:ke], value[:, :, ks:ke], m, l, acc, bias)
        out.append(acc / l)
    return torch.cat(out, dim=2)
