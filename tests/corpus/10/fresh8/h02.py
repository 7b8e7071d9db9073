# expect: pass
"""Flash-style attention: one helper per query tile, running statistics kept in float32 or better."""
import math

import torch


def one_query_tile(q, key, value, start, causal, bs, scale):
    S = key.size(-2)
    acc_dtype = torch.promote_types(q.dtype, torch.float32)
    n = q.size(-2)
    run_max = q.new_full(q.shape[:-1], float("-inf"), dtype=acc_dtype)   # (B, H, n)
    run_sum = q.new_zeros(q.shape[:-1], dtype=acc_dtype)                 # (B, H, n)
    run_out = q.new_zeros(q.shape[:-1] + (value.size(-1),), dtype=acc_dtype)

    stop = min(S, start + n) if causal else S
    j = 0
    while j < stop:
        kb = key[..., j:j + bs, :].to(acc_dtype)
        vb = value[..., j:j + bs, :].to(acc_dtype)
        s = torch.einsum("bhqd,bhkd->bhqk", q.to(acc_dtype), kb) * scale
        if causal:
            qi = torch.arange(start, start + n, device=q.device).view(-1, 1)
            kj = torch.arange(j, j + kb.size(-2), device=q.device).view(1, -1)
            s = torch.where(kj <= qi, s, torch.full_like(s, float("-inf")))
        tile_max = s.max(dim=-1).values
        new_max = torch.maximum(run_max, tile_max)
        alpha = torch.exp(run_max - new_max)
        p = torch.exp(s - new_max.unsqueeze(-1))
        run_sum = alpha * run_sum + p.sum(dim=-1)
        run_out = alpha.unsqueeze(-1) * run_out + torch.einsum("bhqk,bhkd->bhqd", p, vb)
        run_max = new_max
        j += bs
    return run_out / run_sum.unsqueeze(-1)


def tiled_attention(query, key, value, causal=False, block_size=64):
    scale = query.size(-1) ** -0.5
    L = query.size(-2)
    tiles = []
    i = 0
    while i < L:
        tiles.append(one_query_tile(query[..., i:i + block_size, :], key, value, i, causal, block_size, scale))
        i += block_size
    return torch.cat(tiles, dim=-2).to(query.dtype)
