# expect: pass
import math

import torch
import torch.nn as nn


class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, window, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.window = window
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        i = torch.arange(T, device=x.device).view(T, 1)
        j = torch.arange(T, device=x.device).view(1, T)
        blocked = (j > i) | (j <= i - self.window)
        outs = []
        for h in range(self.num_heads):
            sl = slice(h * self.head_dim, (h + 1) * self.head_dim)
            s = q[..., sl] @ k[..., sl].transpose(1, 2) / math.sqrt(self.head_dim)
            w = torch.softmax(s.masked_fill(blocked, float("-inf")), dim=-1)
            outs.append(w @ v[..., sl])
        return self.out_proj(torch.cat(outs, dim=-1))
