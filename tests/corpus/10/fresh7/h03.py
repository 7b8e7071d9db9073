# expect: mask_device
# also: online_softmax_no_rescale
# bug-lines: 26, 31
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    S, d_v = key.shape[-2], value.shape[-1]
    result = torch.empty(B, H, L, d_v, dtype=query.dtype, device=query.device)

    for qs in range(0, L, block_size):
        qe = min(qs + block_size, L)
        qb = query[:, :, qs:qe]
        running_max = torch.full((B, H, qe - qs, 1), -float("inf"), dtype=query.dtype, device=query.device)
        running_sum = torch.zeros_like(running_max)
        acc = torch.zeros(B, H, qe - qs, d_v, dtype=query.dtype, device=query.device)
        for ks in range(0, S, block_size):
            ke = min(ks + block_size, S)
            if causal and ks >= qe:
                continue
            s = qb @ key[:, :, ks:ke].transpose(-2, -1) / math.sqrt(d_k)
            if causal:
                future = torch.arange(ks, ke)[None, :] > torch.arange(qs, qe)[:, None]
                s = s.masked_fill(future, -float("inf"))
            new_max = torch.maximum(running_max, s.amax(-1, keepdim=True))
            p = torch.exp(s - new_max)
            alpha = torch.exp(running_max - new_max)
            running_sum = running_sum + p.sum(-1, keepdim=True)
            acc = acc * alpha + p @ value[:, :, ks:ke]
            running_max = new_max
        result[:, :, qs:qe] = acc / running_sum
    return result
