# attack: score tiles computed one (d, block) at a time but written into one (B, H, d, S) buffer, then an ordinary softmax over it -> fail (scores_materialised)
# Invariant: scores written into part of a larger tensor make that tensor hold them: the buffer spans all keys at
# once (ScoreFlow follows a write into a view to the tensor it views).
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d = query.shape
    S = key.size(-2)
    out = []
    for i0 in range(0, L, d):
        q = query[:, :, i0:i0 + d] / math.sqrt(d)
        buf = torch.empty(B, H, q.size(-2), S, dtype=query.dtype, device=query.device)
        for j0 in range(0, S, block_size):
            buf[:, :, :, j0:j0 + block_size] = q @ key[:, :, j0:j0 + block_size].transpose(-2, -1)
        if causal:
            qi = torch.arange(i0, i0 + q.size(-2), device=query.device)[:, None]
            buf = buf.masked_fill(torch.arange(S, device=query.device)[None, :] > qi, float("-inf"))
        out.append(torch.softmax(buf, dim=-1) @ value)
    return torch.cat(out, dim=2)
