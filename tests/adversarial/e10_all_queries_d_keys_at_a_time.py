# attack: the keys in chunks of d against all queries at once, with an online softmax: (B, H, L, d) score strips shaped like the output -> fail (scores_materialised)
# Invariant: a tensor holding scores (a key dimension) for more than block_size queries at once is a strip of
# scores over the queries, whatever its shape.
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d = query.shape
    S = key.size(-2)
    c = d
    q = query / math.sqrt(d)
    m = torch.full((B, H, L, 1), float("-inf"), dtype=query.dtype, device=query.device)
    l = torch.zeros(B, H, L, 1, dtype=query.dtype, device=query.device)
    acc = torch.zeros(B, H, L, value.size(-1), dtype=query.dtype, device=query.device)
    for j0 in range(0, S, c):
        s = q @ key[:, :, j0:j0 + c].transpose(-2, -1)  # (B, H, L, c)
        if causal:
            qi = torch.arange(L, device=query.device)[:, None]
            kj = torch.arange(j0, j0 + s.size(-1), device=query.device)[None, :]
            s = s.masked_fill(kj > qi, float("-inf"))
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p = torch.exp(s - m_new)
        corr = torch.exp(m - m_new)
        l = l * corr + p.sum(-1, keepdim=True)
        acc = acc * corr + p @ value[:, :, j0:j0 + c]
        m = m_new
    return acc / l
