# expect: mask_zero_fill
# also: view_noncontiguous
# bug-lines: 34, 38
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        nh, hs = self.num_heads, self.head_dim
        assert T <= self.mask.size(0), f"{T} tokens exceed context_length {self.mask.size(0)}"
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs); stage: queries
        k = self.W_key(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs); stage: keys
        v = self.W_value(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs); stage: values
        att = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T, T); stage: scores, scaled_scores
        att = att.masked_fill(self.mask[:T, :T], 0.0)
        att = torch.softmax(att, dim=-1)  # stage: weights
        att = self.dropout(att)  # stage: dropped_weights
        y = att @ v  # (B, nh, T, hs); stage: context
        y = y.transpose(1, 2).view(B, T, self.d_out)
        return self.out_proj(y)  # stage: output
