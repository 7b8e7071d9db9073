# expect: mask_diagonal
# bug-lines: 17
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
        self.attn_drop = nn.Dropout(dropout)
        self.register_buffer("causal", torch.triu(torch.ones(context_length, context_length), diagonal=0).bool())

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        att = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(self.d_out)
        att = att.masked_fill(self.causal[:T, :T], float("-inf"))
        att = torch.softmax(att, dim=-1)
        att = self.attn_drop(att)
        return torch.matmul(att, v)
