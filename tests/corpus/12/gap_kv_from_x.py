# expect: cross_kv_from_queries
# bug-lines: 25, 26
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        self.h = num_heads
        self.dk = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, self.dk).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        q = self.split(self.W_query(x))
        k = self.split(self.W_key(x))  # keys taken from the decoder side
        v = self.split(self.W_value(x))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        if context_padding_mask is not None:
            s = s.masked_fill(context_padding_mask[:, None, None, :], float("-inf"))
        a = s.softmax(dim=-1) @ v
        b, _, t, _ = a.shape
        return self.out_proj(a.transpose(1, 2).reshape(b, t, -1))
