# expect: padding_mask_ignored
# bug-lines: 35
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("num_heads must divide d_out")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def split(self, t):
        B, N, _ = t.shape
        return t.reshape(B, N, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        q = self.split(self.W_query(x))
        k = self.split(self.W_key(context))
        v = self.split(self.W_value(context))
        scores = (q @ k.transpose(-2, -1)) * self.scale
        if context_padding_mask is not None:
            pad = context_padding_mask[:, None, None, :]
            scores.masked_fill(pad, float("-inf"))
        probs = scores.softmax(dim=-1)
        y = (probs @ v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y)
