# expect: padding_mask_broadcast
# bug-lines: 31
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.d_out = d_out
        self.heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        b, t, _ = x.shape
        s = context.shape[1]
        hd = self.d_out // self.heads
        q = self.W_query(x).reshape(b, t, self.heads, hd).permute(0, 2, 1, 3)
        k = self.W_key(context).reshape(b, s, self.heads, hd).permute(0, 2, 3, 1)   # (b, h, hd, s)
        v = self.W_value(context).reshape(b, s, self.heads, hd).permute(0, 2, 1, 3)

        logits = torch.matmul(q, k) / math.sqrt(hd)
        if context_padding_mask is not None:
            logits = logits.masked_fill(context_padding_mask.unsqueeze(1), torch.finfo(logits.dtype).min)
        probs = logits.softmax(dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(b, t, self.d_out)
        return self.out_proj(ctx)
