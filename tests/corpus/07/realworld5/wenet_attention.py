# expect: pass
# source: wenet-e2e/wenet @03030968258594d3522e562212b0ac87dbf9c889, wenet/transformer/attention.py (MultiHeadedAttention.forward, forward_attention)
# changes: function padded_attention instead of the module; q/k/v arrive already split into heads (forward_qkv, the merge and linear_out removed: no contract input for them); d_k read from query; the contract's key_padding_mask (True = padding) and causal flag turned once into the author's keep-mask (batch, time1, time2), 1 = attend; dropout removed (no dropout in the contract); returns x instead of linear_out(x)
import math
from typing import Optional

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    n_batch, time1, time2 = query.size(0), query.size(-2), key.size(-2)
    mask: Optional[torch.Tensor] = None
    if key_padding_mask is not None or causal:
        mask = torch.ones(n_batch, time1, time2, dtype=torch.bool, device=query.device)
        if key_padding_mask is not None:
            mask = mask & ~key_padding_mask[:, None, :]
        if causal:
            mask = mask & torch.ones(time1, time2, dtype=torch.bool, device=query.device).tril()

    d_k = query.size(-1)
    q, k, v = query, key, value
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    return forward_attention(v, scores, mask)


def forward_attention(value: torch.Tensor, scores: torch.Tensor,
                      mask: Optional[torch.Tensor]) -> torch.Tensor:
    if mask is not None:
        mask = mask.unsqueeze(1).eq(0)  # (batch, 1, *, time2)
        scores = scores.masked_fill(mask, -float('inf'))
        attn = torch.softmax(scores, dim=-1).masked_fill(
            mask, 0.0)  # (batch, head, time1, time2)
    else:
        attn = torch.softmax(scores, dim=-1)  # (batch, head, time1, time2)

    x = torch.matmul(attn, value)  # (batch, head, time1, d_k)
    return x
