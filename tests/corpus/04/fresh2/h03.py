# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """Head by head: each head works on its own slice of the projected features.

    Slicing features [h*hd:(h+1)*hd] is exactly what view(b, T, heads, hd) does.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("num_heads must divide d_out")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(diagonal=1).bool())

    def forward(self, x):
        T = x.shape[1]
        Q, K, V = self.W_query(x), self.W_key(x), self.W_value(x)
        mask = self.mask[:T, :T]
        outputs = []
        for h in range(self.num_heads):
            sl = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q, k, v = Q[..., sl], K[..., sl], V[..., sl]
            s = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
            s = s.masked_fill(mask, float("-inf"))
            w = self.dropout(torch.softmax(s, dim=-1))
            outputs.append(w @ v)
        return self.out_proj(torch.cat(outputs, dim=-1))
