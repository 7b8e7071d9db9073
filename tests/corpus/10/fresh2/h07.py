# expect: online_softmax_overflow
# also: dtype_not_kept
# bug-lines: 13, 26
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, Dk = query.shape
    S, Dv = key.shape[2], value.shape[3]
    q_all = query.float()
    out = torch.zeros(B, H, L, Dv, device=query.device)
    for a in range(0, L, block_size):
        q = q_all[:, :, a:a + block_size]
        bq = q.shape[2]
        denom = torch.zeros(B, H, bq, 1, device=query.device)
        numer = torch.zeros(B, H, bq, Dv, device=query.device)
        for b in range(0, S, block_size):
            if causal and b > a + bq - 1:
                break
            k = key[:, :, b:b + block_size].float()
            v = value[:, :, b:b + block_size].float()
            s = q @ k.transpose(-2, -1) / math.sqrt(Dk)
            # exp(s) summed directly: the sums never need rescaling
            e = torch.exp(s)
            if causal:
                qpos = torch.arange(a, a + bq, device=query.device)[:, None]
                kpos = torch.arange(b, b + k.shape[2], device=query.device)[None, :]
                e = e.masked_fill(kpos > qpos, 0.0)
            denom = denom + e.sum(-1, keepdim=True)
            numer = numer + e @ v
        out[:, :, a:a + bq] = numer / denom
    return out
