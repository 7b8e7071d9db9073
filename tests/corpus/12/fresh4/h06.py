# expect: padding_mask_broadcast
# also: heads_not_divisible
# bug-lines: 13, 30
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        q, k, v = self.split(self.W_query(x)), self.split(self.W_key(context)), self.split(self.W_value(context))
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(self.head_dim))
        if context_padding_mask is not None:
            mask = context_padding_mask.unsqueeze(1)
            scores = scores.masked_fill(mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = (attn @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(out)
