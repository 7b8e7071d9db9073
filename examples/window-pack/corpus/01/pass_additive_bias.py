# expect: pass
import math

import torch
import torch.nn as nn


class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, window, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.h = num_heads
        self.dh = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        ones = torch.ones(context_length, context_length)
        keep = torch.tril(ones) * torch.triu(ones, diagonal=-(window - 1))
        self.register_buffer("bias", torch.zeros(context_length, context_length).masked_fill(keep == 0, float("-inf")))

    def forward(self, x):
        b, t, _ = x.shape
        q = self.W_query(x).reshape(b, t, self.h, self.dh).permute(0, 2, 1, 3)
        k = self.W_key(x).reshape(b, t, self.h, self.dh).permute(0, 2, 1, 3)
        v = self.W_value(x).reshape(b, t, self.h, self.dh).permute(0, 2, 1, 3)
        att = (q * self.dh ** -0.5) @ k.transpose(-1, -2) + self.bias[:t, :t]
        att = att.softmax(dim=-1)
        y = (att @ v).permute(0, 2, 1, 3).reshape(b, t, self.h * self.dh)
        return self.out_proj(y)
