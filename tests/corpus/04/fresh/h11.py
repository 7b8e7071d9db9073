# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise AssertionError("d_out must be a multiple of num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        mask = torch.ones(context_length, context_length, dtype=torch.bool).triu(diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        batch, tokens, _ = x.shape
        # (batch, tokens, d_out) -> (batch, heads, tokens, head_dim)
        q, k, v = [
            layer(x).view(batch, tokens, self.num_heads, self.head_dim).transpose(1, 2)
            for layer in (self.W_query, self.W_key, self.W_value)
        ]
        # (batch, heads, tokens, tokens)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:tokens, :tokens], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        # back to (batch, tokens, heads, head_dim), then (batch, tokens, d_out)
        context = torch.matmul(weights, v).transpose(1, 2).contiguous().view(batch, tokens, self.d_out)
        return self.out_proj(context)
