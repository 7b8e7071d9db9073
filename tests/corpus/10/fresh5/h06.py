# expect: scale_wrong_dim
# also: online_softmax_overflow
# bug-lines: 13, 30
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, _ = query.shape
    S = key.shape[-2]
    d_v = value.shape[-1]
    factor = math.sqrt(d_v)
    chunks = []
    for a in range(0, L, block_size):
        qa = query[:, :, a:a + block_size]
        n = qa.shape[2]
        total = torch.zeros(B, H, n, 1, dtype=query.dtype, device=query.device)
        weighted = torch.zeros(B, H, n, d_v, dtype=query.dtype, device=query.device)
        for c in range(0, S, block_size):
            if causal and c >= a + n:
                break
            kc = key[:, :, c:c + block_size]
            vc = value[:, :, c:c + block_size]
            s = torch.matmul(qa, kc.transpose(-2, -1)) / factor
            if causal:
                qpos = torch.arange(a, a + n, device=query.device)[:, None]
                kpos = torch.arange(c, c + kc.shape[2], device=query.device)[None, :]
                s = s.masked_fill(kpos > qpos, float("-inf"))
            e = torch.exp(s)
            total = total + e.sum(dim=-1, keepdim=True)
            weighted = weighted + torch.matmul(e, vc)
        chunks.append(weighted / total)
    return torch.cat(chunks, dim=2)
