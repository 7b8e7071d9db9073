# expect: heads_merge_wrong
# bug-lines: 37
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.h = num_heads
        self.hd = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("causal_mask", torch.ones(context_length, context_length).triu(1).bool())

    def _split(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.h, self.hd).transpose(1, 2)

    def forward(self, x):
        B, T, _ = x.shape
        q = self._split(self.W_query(x))
        k = self._split(self.W_key(x))
        v = self._split(self.W_value(x))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        att = att.masked_fill(self.causal_mask[:T, :T], float("-inf"))
        att = self.drop(att.softmax(dim=-1))
        y = att @ v
        y = y.reshape(B, T, self.d_out)
        return self.out_proj(y)
