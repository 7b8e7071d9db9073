# expect: heads_merge_wrong
# bug-lines: 33
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1).bool())

    def forward(self, x):
        B, T, _ = x.shape
        H, D = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, H, D).permute(0, 2, 1, 3)
        k = self.W_key(x).view(B, T, H, D).permute(0, 2, 1, 3)
        v = self.W_value(x).view(B, T, H, D).permute(0, 2, 1, 3)
        w = (q @ k.transpose(-2, -1)) / math.sqrt(D)
        w = w.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        w = self.dropout(w)
        y = w @ v
        y = y.permute(0, 2, 3, 1).reshape(B, T, self.d_out)
        return self.out_proj(y)
