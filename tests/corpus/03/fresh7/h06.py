# expect: mask_device
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
        self.dropout = nn.Dropout(dropout)
        self.mask = torch.ones(context_length, context_length).triu(1).bool()

    def forward(self, x):
        n = x.shape[1]
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        attn = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_out)
        attn = attn.masked_fill(self.mask[:n, :n], float("-inf"))
        attn = self.dropout(attn.softmax(dim=-1))
        return torch.matmul(attn, v)
