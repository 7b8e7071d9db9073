# expect: mask_device
# bug-lines: 18
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
        # a plain attribute: .to(device) does not move it
        self.mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)

    def forward(self, x):
        B, T, C = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = torch.softmax(att, dim=-1)
        att = self.dropout(att)
        return att @ v
