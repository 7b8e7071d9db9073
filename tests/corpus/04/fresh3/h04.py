# expect: heads_not_divisible
# bug-lines: 12
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, _ = x.shape

        def heads(t):
            return t.view(b, num_tokens, self.num_heads, -1).transpose(1, 2)

        queries = heads(self.W_query(x))
        keys = heads(self.W_key(x))
        values = heads(self.W_value(x))

        scores = queries @ keys.transpose(2, 3)
        scores = scores / math.sqrt(keys.shape[-1])
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores, dim=-1))

        context = (weights @ values).transpose(1, 2).contiguous()
        context = context.view(b, num_tokens, self.d_out)
        return self.out_proj(context)
