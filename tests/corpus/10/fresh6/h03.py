# expect: online_softmax_no_rescale
# also: dtype_not_kept
# bug-lines: 36, 41
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d = query.shape
    S = key.shape[-2]
    dv = value.shape[-1]
    out_blocks = []

    for qs in range(0, L, block_size):
        q_blk = query[:, :, qs:qs + block_size, :]
        n_q = q_blk.shape[2]
        m = q_blk.new_full((B, H, n_q, 1), -float("inf"))
        l = q_blk.new_zeros((B, H, n_q, 1))
        acc = q_blk.new_zeros((B, H, n_q, dv))

        for ks in range(0, S, block_size):
            if causal and ks >= qs + n_q:
                break
            k_blk = key[:, :, ks:ks + block_size, :]
            v_blk = value[:, :, ks:ks + block_size, :]
            s = q_blk @ k_blk.transpose(-1, -2) / math.sqrt(d)
            if causal:
                q_pos = torch.arange(qs, qs + n_q, device=s.device).unsqueeze(-1)
                k_pos = torch.arange(ks, ks + k_blk.shape[2], device=s.device).unsqueeze(0)
                s = s.masked_fill(k_pos > q_pos, -float("inf"))

            m_new = torch.maximum(m, s.max(dim=-1, keepdim=True).values)
            p = torch.exp(s - m_new)
            l = l * torch.exp(m - m_new) + p.sum(dim=-1, keepdim=True)
            acc = acc + p @ v_blk
            m = m_new

        out_blocks.append(acc / l)

    return torch.cat(out_blocks, dim=2).float()
