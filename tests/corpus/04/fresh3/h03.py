# expect: heads_merge_wrong
# bug-lines: 36
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
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

        Q = self.W_query(x).view(B, T, H, D).permute(0, 2, 1, 3)
        K = self.W_key(x).view(B, T, H, D).permute(0, 2, 1, 3)
        V = self.W_value(x).view(B, T, H, D).permute(0, 2, 1, 3)

        energy = torch.einsum("bhqd,bhkd->bhqk", Q, K) / math.sqrt(D)
        energy = energy.masked_fill(self.mask[:T, :T], float("-inf"))
        attention = self.dropout(torch.softmax(energy, dim=-1))

        out = torch.einsum("bhqk,bhkd->bhqd", attention, V)  # (B, H, T, D)
        out = out.reshape(B, T, H * D)
        return self.out_proj(out)
