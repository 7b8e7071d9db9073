# expect: pass
# held-out: correct; slices each head's columns in a Python loop, one nn.Dropout call per head, concatenates heads, then out_proj.
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        T = x.shape[1]
        q_all, k_all, v_all = self.W_query(x), self.W_key(x), self.W_value(x)
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q, k, v = q_all[..., cols], k_all[..., cols], v_all[..., cols]
            s = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
            s = s.masked_fill(self.mask[:T, :T], float("-inf"))
            w = self.dropout(torch.softmax(s, dim=-1))
            heads.append(w @ v)
        return self.out_proj(torch.cat(heads, dim=-1))
