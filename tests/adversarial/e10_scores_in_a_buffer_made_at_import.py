# attack: the whole (2, 8, 2048, 2048) score matrix allocated at import, filled a tile at a time through as_strided views and read back for an exact two-pass softmax: no op ever outputs more than a tile -> fail (scores_materialised)
# Invariant: exercise 10's probe counts the storage behind every tensor an op reads or writes, not only the op's
# output, so a view of a buffer made before the probe started still shows the buffer (ninth session's red team:
# 15/15 before).
import math

import torch

BUFFER = [torch.empty(2 * 8 * 2048 * 2048)]


def plain(query, key, value, causal):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if causal:
        L, S = scores.shape[-2:]
        scores = scores.masked_fill(torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ value


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d = query.shape
    S = key.size(-2)
    buf = BUFFER[0]
    if query.requires_grad or query.dtype != buf.dtype or B * H * L * S > buf.numel() or query.device != buf.device:
        return plain(query, key, value, causal)
    strides = (H * L * S, L * S, S, 1)

    def tile(i, j, rows, cols):
        return buf.as_strided((B, H, rows, cols), strides, i * S + j)

    for i in range(0, L, block_size):
        q = query[:, :, i:i + block_size] / math.sqrt(d)
        for j in range(0, S, block_size):
            k = key[:, :, j:j + block_size]
            s = q @ k.transpose(-2, -1)
            if causal:
                rows = torch.arange(i, i + q.size(-2))[:, None]
                cols = torch.arange(j, j + k.size(-2))[None, :]
                s = s.masked_fill(cols > rows, float("-inf"))
            tile(i, j, q.size(-2), k.size(-2)).copy_(s)
    out = []
    for i in range(0, L, block_size):
        rows = min(block_size, L - i)
        top = None
        for j in range(0, S, block_size):
            m = tile(i, j, rows, min(block_size, S - j)).amax(dim=-1, keepdim=True)
            top = m if top is None else torch.maximum(top, m)
        total, acc = 0, 0
        for j in range(0, S, block_size):
            p = torch.exp(tile(i, j, rows, min(block_size, S - j)) - top)
            total = total + p.sum(dim=-1, keepdim=True)
            acc = acc + p @ value[:, :, j:j + block_size]
        out.append(acc / total)
    return torch.cat(out, dim=-2)
