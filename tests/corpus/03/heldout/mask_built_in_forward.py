# expect: mask_device
# held-out: builds the causal mask inside forward with torch.triu(torch.ones(T, T)) on the CPU, no buffer and no device=.
# bug-lines: 23
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        att = att.masked_fill(mask, float("-inf"))
        att = self.dropout(torch.softmax(att, dim=-1))
        return att @ v
