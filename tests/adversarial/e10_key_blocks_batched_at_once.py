# attack: the keys reshaped into (n_blocks, block) and every block scored in one batched matmul: (B, H, n_blocks, 1, block) scores for all keys of one query, no dimension wider than a block -> fail (scores_materialised)
# Invariant: keys split over two dimensions still count as the keys they hold (the product of the key dimensions).
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d = query.shape
    S = key.size(-2)
    nb = -(-S // block_size)
    pad = nb * block_size - S
    kp = torch.cat([key, key.new_zeros(B, H, pad, d)], dim=2)
    kb = kp.reshape(B, H, nb, block_size, d)
    vp = torch.cat([value, value.new_zeros(B, H, pad, value.size(-1))], dim=2)
    pos = torch.arange(nb * block_size, device=query.device)
    rows = []
    for i in range(L):
        s = query[:, :, None, i : i + 1] @ kb.transpose(-2, -1) / math.sqrt(d)  # (B, H, nb, 1, block)
        s = s.reshape(B, H, 1, nb * block_size)
        blocked = (pos >= S) | (pos > i) if causal else pos >= S
        p = torch.softmax(s.masked_fill(blocked, float("-inf")), dim=-1)
        rows.append(p @ vp)
    return torch.cat(rows, dim=2)
