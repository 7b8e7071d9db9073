# expect: fp16_fill_overflow
# bug-lines: 32
# source: NVIDIA/NeMo @0111fe9bdda1af334d3c9371f6dfaf1b6fe9e8d4, nemo/collections/asr/parts/submodules/multi_head_attention.py (MultiHeadAttention.forward and forward_attention)
# changes: function form; linear_q/k/v/out, dropout and head merge removed (the contract passes split heads and returns them); the (batch, time1, time2) True=masked mask NeMo's callers pass is built at the entry from key_padding_mask and causal; np.finfo(np.float16/np.float32) written as torch.finfo (numpy is not an allowed import); self.attn kept as a local
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    mask = None
    if key_padding_mask is not None or causal:
        B, L, S = query.size(0), query.size(2), key.size(2)
        mask = torch.zeros(B, L, S, dtype=torch.bool, device=query.device)
        if key_padding_mask is not None:
            mask = mask | key_padding_mask.view(B, 1, S)
        if causal:
            mask = mask | torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)
    q, k, v = query, key, value
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    return forward_attention(v, scores, mask)


def forward_attention(value, scores, mask):
    if mask is not None:
        mask = mask.unsqueeze(1)  # (batch, 1, time1, time2)
        if scores.dtype == torch.float16:
            dtype = torch.float16
        else:
            dtype = torch.float32
        min_value = torch.finfo(dtype).min
        scores = scores.masked_fill(mask, min_value)
        attn = torch.softmax(scores, dim=-1).masked_fill(mask, 0.0)  # (batch, head, time1, time2)
    else:
        attn = torch.softmax(scores, dim=-1)  # (batch, head, time1, time2)

    x = torch.matmul(attn, value)  # (batch, head, time1, d_k)
    return x
