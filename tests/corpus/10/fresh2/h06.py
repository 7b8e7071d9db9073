# expect: online_softmax_block_average
# bug-lines: 28, 30, 31, 32
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[2]
    out_blocks = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        n_q = q.shape[2]
        total = torch.zeros(B, H, n_q, value.shape[-1], dtype=query.dtype, device=query.device)
        n_blocks = torch.zeros(B, H, n_q, 1, dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            if causal and j0 > i0 + n_q - 1:
                break
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
            if causal:
                r = torch.arange(i0, i0 + n_q, device=q.device).unsqueeze(1)
                c = torch.arange(j0, j0 + k.shape[2], device=q.device).unsqueeze(0)
                s = s.masked_fill(c > r, float("-inf"))
            # softmax inside the block, then average the blocks' results
            w = torch.softmax(s, dim=-1).nan_to_num(0.0)
            seen = (s > float("-inf")).any(dim=-1, keepdim=True).to(query.dtype)
            total = total + torch.matmul(w, v)
            n_blocks = n_blocks + seen
        out_blocks.append(total / n_blocks)
    return torch.cat(out_blocks, dim=2)
