# expect: scale_wrong_dim
# bug-lines: 17
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.scale = math.sqrt(d_out)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        causal = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)
        self.register_buffer("causal", causal)

    def split_heads(self, t, b, T):
        return t.view(b, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, T, _ = x.shape
        q = self.split_heads(self.W_query(x), b, T)
        k = self.split_heads(self.W_key(x), b, T)
        v = self.split_heads(self.W_value(x), b, T)

        scores = q @ k.transpose(-2, -1) / self.scale
        scores = scores.masked_fill(self.causal[:T, :T], float("-inf"))
        weights = self.dropout(scores.softmax(dim=-1))

        out = (weights @ v).transpose(1, 2).reshape(b, T, self.d_out)
        return self.out_proj(out)
