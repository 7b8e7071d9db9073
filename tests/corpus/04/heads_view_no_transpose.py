# expect: heads_split_wrong
# bug-lines: 27, 28, 29, 33
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        self.h = num_heads
        self.d_head = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x):
        B, T, D = x.shape
        # (B, T, h, d_head): the heads axis is never moved in front of the tokens
        q = self.W_query(x).view(B, T, self.h, self.d_head)
        k = self.W_key(x).view(B, T, self.h, self.d_head)
        v = self.W_value(x).view(B, T, self.h, self.d_head)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, T, h, h)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = self.dropout(F.softmax(att, dim=-1))
        y = (att @ v).reshape(B, T, -1)
        return self.out_proj(y)
