# expect: pass
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    dtype = query.dtype
    acc_dtype = torch.promote_types(dtype, torch.float32)
    scale = 1.0 / math.sqrt(query.size(-1))
    k_blocks = key.split(block_size, dim=2)
    v_blocks = value.split(block_size, dim=2)
    rows_out = []
    q_start = 0
    for q_blk in query.split(block_size, dim=2):
        bq = q_blk.size(2)
        q_blk = q_blk.to(acc_dtype)
        row_max = q_blk.new_full(q_blk.shape[:3] + (1,), float("-inf"))
        denom = q_blk.new_zeros(q_blk.shape[:3] + (1,))
        numer = q_blk.new_zeros(q_blk.shape[:3] + (value.size(-1),))
        k_start = 0
        for k_blk, v_blk in zip(k_blocks, v_blocks):
            bk = k_blk.size(2)
            if causal and k_start > q_start + bq - 1:
                break
            s = torch.matmul(q_blk, k_blk.to(acc_dtype).transpose(-1, -2)) * scale
            if causal:
                q_pos = torch.arange(q_start, q_start + bq, device=s.device)
                k_pos = torch.arange(k_start, k_start + bk, device=s.device)
                s = torch.where(k_pos[None, :] > q_pos[:, None], torch.full_like(s, float("-inf")), s)
            new_max = torch.maximum(row_max, s.max(dim=-1, keepdim=True).values)
            rescale = torch.exp(row_max - new_max)
            p = torch.exp(s - new_max)
            denom = denom * rescale + p.sum(dim=-1, keepdim=True)
            numer = numer * rescale + torch.matmul(p, v_blk.to(acc_dtype))
            row_max = new_max
            k_start += bk
        rows_out.append((numer / denom).to(dtype))
        q_start += bq
    return torch.cat(rows_out, dim=2)
