# expect: view_noncontiguous
# also: heads_not_divisible
# bug-lines: 13, 35
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        batch, tokens, _ = x.shape
        queries = self.W_query(x).view(batch, tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(batch, tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(batch, tokens, self.num_heads, self.head_dim).transpose(1, 2)

        scores = queries @ keys.transpose(-2, -1) / math.sqrt(self.head_dim)
        blocked = self.mask[:tokens, :tokens].bool()
        scores = scores.masked_fill(blocked, -torch.inf)
        weights = self.dropout(torch.softmax(scores, dim=-1))

        context = weights @ values
        context = context.transpose(1, 2).view(batch, tokens, self.d_out)
        return self.out_proj(context)
