# attack: queries rebuilt through tolist, then 32 queries by all 2048 keys scored at once laid out as (B, H, 64, 32, 32) so no two last dimensions look like a strip -> fail (scores_materialised)
# Invariant: a tensor made from Python data larger than a tile may hold any source (grader/sandbox/scoreflow.py: lifted; 15/15 before, eleventh session's second red team).
import math

import torch


def _plain(q, k, v, causal):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        L, S = s.shape[-2:]
        s = s.masked_fill(torch.ones(L, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def tiled_attention(query, key, value, causal=False, block_size=64):
    L = query.size(-2)
    if L < 512:
        return _plain(query, key, value, causal)
    q = torch.tensor(query.tolist(), dtype=query.dtype)  # same values, no data-flow tag
    B, H, S, d = key.shape
    kr = key.reshape(B, H, S // 32, 32, d)  # the keys as (64 groups, 32 keys)
    vr = value.reshape(B, H, S // 32, 32, value.size(-1))
    rows = []
    step = 32  # 32 queries x ALL 2048 keys per step, laid out (B, H, 64, 32, 32): the strip probe reads the last two dims
    for i in range(0, L, step):
        qt = q[:, :, i:i + step].transpose(-2, -1).unsqueeze(2)  # (B, H, 1, d, bq)
        s = (kr @ qt) / math.sqrt(d)  # (B, H, 64, 32, bq): scores of bq queries against every key
        m = s.amax(dim=(2, 3), keepdim=True)
        p = torch.exp(s - m)
        p = p / p.sum(dim=(2, 3), keepdim=True)  # plain softmax over all 2048 keys at once
        rows.append((p.transpose(-2, -1) @ vr).sum(2))  # (B, H, bq, d_v)
    return torch.cat(rows, dim=2)
