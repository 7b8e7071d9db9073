# expect: online_softmax_no_rescale
# bug-lines: 32
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    scale = 1 / math.sqrt(d_k)
    blocks = []
    for i0 in range(0, L, block_size):
        q = query[..., i0:i0 + block_size, :]
        bq = q.size(-2)
        m = q.new_full((B, H, bq, 1), float("-inf"))
        l = q.new_zeros((B, H, bq, 1))
        acc = q.new_zeros((B, H, bq, value.size(-1)))
        for j0 in range(0, S, block_size):
            if causal and j0 >= i0 + bq:
                break
            k = key[..., j0:j0 + block_size, :]
            v = value[..., j0:j0 + block_size, :]
            s = torch.matmul(q, k.transpose(-1, -2)) * scale
            if causal:
                qpos = torch.arange(i0, i0 + bq, device=q.device).unsqueeze(1)
                kpos = torch.arange(j0, j0 + k.size(-2), device=q.device).unsqueeze(0)
                s = s.masked_fill(kpos > qpos, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            alpha = torch.exp(m - m_new)
            l = l + p.sum(-1, keepdim=True)
            acc = acc * alpha + torch.matmul(p, v)
            m = m_new
        blocks.append(acc / l)
    return torch.cat(blocks, dim=-2)
