# expect: mask_diagonal
# also: dropout_misplaced
# bug-lines: 18, 25, 29
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        future = torch.triu(torch.ones(context_length, context_length), diagonal=0)
        self.register_buffer("mask", future.bool())

    def forward(self, x):
        b, T, _ = x.shape
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.dropout(self.W_value(x))
        scores = queries @ keys.transpose(1, 2)
        scores = scores.masked_fill(self.mask[:T, :T], -torch.inf)
        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)
        return weights @ values
