# expect: heads_not_divisible
# bug-lines: 10, 11, 12, 13
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads  # no check: d_out = 9 with 2 heads is accepted
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def split(self, t):
        B, N, _ = t.shape
        return t.view(B, N, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        q, k, v = self.split(self.W_query(x)), self.split(self.W_key(context)), self.split(self.W_value(context))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            scores = scores.masked_fill(context_padding_mask[:, None, None, :], float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.out_proj(out.transpose(1, 2).reshape(B, T, self.d_out))
