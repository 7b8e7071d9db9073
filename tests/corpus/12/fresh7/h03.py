# expect: cross_kv_from_queries
# bug-lines: 26, 27
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be a multiple of num_heads")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        nh, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hd).transpose(1, 2)
        k = self.W_key(x).view(B, S, nh, hd).transpose(1, 2)
        v = self.W_value(x).view(B, S, nh, hd).transpose(1, 2)

        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
        if context_padding_mask is not None:
            att = att.masked_fill(context_padding_mask.unsqueeze(1).unsqueeze(2), float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, nh * hd)
        return self.out_proj(y)
