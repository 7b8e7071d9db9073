# expect: mask_device
# also: dropout_in_eval
# bug-lines: 30, 33
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.drop_p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def heads(self, t, b, n):
        return t.view(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (self.heads(layer(x), b, n) for layer in (self.W_query, self.W_key, self.W_value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        future = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)  # made on the CPU whatever x's device
        scores = scores.masked_fill(future, float("-inf"))
        weights = scores.softmax(dim=-1)
        weights = F.dropout(weights, self.drop_p, True)  # training=True: drops in eval mode too
        y = (weights @ v).permute(0, 2, 1, 3).reshape(b, n, self.d_out)
        return self.out_proj(y)
