# expect: cross_kv_from_queries
# bug-lines: 28
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def heads(self, t):
        return t.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        q = self.heads(self.W_query(x))
        k = self.heads(self.W_key(x))
        v = self.heads(self.W_value(context))
        att = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            att = att.masked_fill(context_padding_mask[:, None, None, :], float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T, self.d_out))
