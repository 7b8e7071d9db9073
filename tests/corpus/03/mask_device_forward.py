# expect: mask_device
# bug-lines: 25
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
        b, T, _ = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        mask = torch.triu(torch.ones(T, T), diagonal=1).bool()  # built on the CPU every call
        scores = scores.masked_fill(mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return weights @ v
