# expect: mask_zero_fill
# also: out_proj_missing
# bug-lines: 32, 35
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"{d_out} % {num_heads} != 0")
        self.n_heads = num_heads
        self.d_head = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("causal", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        B, T, _ = x.shape
        shape = (B, T, self.n_heads, self.d_head)
        Q = self.W_query(x).view(shape).transpose(1, 2)
        K = self.W_key(x).view(shape).transpose(1, 2)
        V = self.W_value(x).view(shape).transpose(1, 2)
        S = Q @ K.transpose(-1, -2) / math.sqrt(self.d_head)
        S = S * self.causal[:T, :T]  # keep the past, drop the future
        P = self.dropout(torch.softmax(S, dim=-1))
        out = (P @ V).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return out
