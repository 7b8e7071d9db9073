# expect: runtime_error
# bug-lines: 30
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        queries = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(context).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(context).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)

        scores = queries @ keys.transpose(2, 3) / self.head_dim ** 0.5
        if context_padding_mask is not None:
            pad = context_padding_mask.view(B, 1, 1, T)
            scores = scores.masked_fill(pad, -torch.inf)
        weights = torch.softmax(scores, dim=-1)
        context_vec = (weights @ values).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(context_vec)
