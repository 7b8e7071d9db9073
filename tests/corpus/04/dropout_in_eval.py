# expect: dropout_in_eval
# bug-lines: 34
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.dropout_p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        B, T, _ = x.shape
        nh, hs = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, nh, hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, nh, hs).transpose(1, 2)
        att = q @ k.transpose(-2, -1) / math.sqrt(hs)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        att = F.dropout(att, p=self.dropout_p)  # F.dropout defaults to training=True
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y)
