# expect: runtime_error
# bug-lines: 24
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, dk = query.shape
    S = key.shape[2]
    scale = dk ** -0.5
    diag_mask = torch.ones(block_size, block_size, dtype=torch.bool, device=query.device).triu(1)
    pieces = []
    for qi in range(0, L, block_size):
        q = query[:, :, qi:qi + block_size] * scale
        running_max = torch.full(q.shape[:-1] + (1,), -math.inf, dtype=q.dtype, device=q.device)
        running_sum = torch.zeros_like(running_max)
        running_acc = torch.zeros(q.shape[:-1] + (value.shape[-1],), dtype=q.dtype, device=q.device)
        for kj in range(0, S, block_size):
            if causal and kj > qi:
                break
            s = q @ key[:, :, kj:kj + block_size].transpose(2, 3)
            if causal and kj == qi:
                s = s.masked_fill(diag_mask, -math.inf)
            block_max = s.max(dim=-1, keepdim=True).values
            new_max = torch.maximum(running_max, block_max)
            p = (s - new_max).exp()
            factor = (running_max - new_max).exp()
            running_sum = running_sum * factor + p.sum(dim=-1, keepdim=True)
            running_acc = running_acc * factor + p @ value[:, :, kj:kj + block_size]
            running_max = new_max
        pieces.append(running_acc / running_sum)
    return torch.cat(pieces, dim=2)
