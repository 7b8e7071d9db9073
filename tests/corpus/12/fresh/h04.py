# expect: padding_mask_on_queries
# bug-lines: 29
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.h = num_heads
        self.hs = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        _, S, _ = context.shape
        q = self.W_query(x).view(B, T, self.h, self.hs).transpose(1, 2)
        k = self.W_key(context).view(B, S, self.h, self.hs).transpose(1, 2)
        v = self.W_value(context).view(B, S, self.h, self.hs).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.hs)
        if context_padding_mask is not None:
            pad = context_padding_mask.unsqueeze(1).unsqueeze(-1)  # (B, 1, S, 1)
            scores = scores.masked_fill(pad, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(out)
