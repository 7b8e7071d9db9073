# expect: online_softmax_block_average
# held-out: computes a full softmax inside each key block and averages the per-block outputs.
# bug-lines: 27, 28, 29, 30, 31
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S = key.shape[-2]
    outputs = []
    for i0 in range(0, L, block_size):
        q = query[:, :, i0:i0 + block_size]
        bq = q.shape[-2]
        total = None
        n_blocks = 0
        stop = min(S, i0 + bq) if causal else S
        for j0 in range(0, stop, block_size):
            k = key[:, :, j0:j0 + block_size]
            v = value[:, :, j0:j0 + block_size]
            s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
            if causal:
                qi = torch.arange(i0, i0 + bq, device=query.device)[:, None]
                kj = torch.arange(j0, j0 + k.shape[-2], device=query.device)[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            w = torch.softmax(s, dim=-1).nan_to_num(0.0)
            o = w @ v
            total = o if total is None else total + o
            n_blocks += 1
        outputs.append(total / n_blocks)
    return torch.cat(outputs, dim=2)
