# expect: heads_split_wrong
# bug-lines: 23, 24, 25
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        q = self.W_query(x).view(B, self.num_heads, T, self.head_dim)  # view only, no transpose
        k = self.W_key(context).view(B, self.num_heads, S, self.head_dim)
        v = self.W_value(context).view(B, self.num_heads, S, self.head_dim)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            att = att.masked_fill(context_padding_mask.view(B, 1, 1, S), float("-inf"))
        y = att.softmax(dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y)
