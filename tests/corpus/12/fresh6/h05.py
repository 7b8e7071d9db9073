# expect: view_noncontiguous
# bug-lines: 38
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        batch, n_q, _ = x.shape
        n_kv = context.shape[1]

        queries = self.W_query(x).view(batch, n_q, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(context).view(batch, n_kv, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(context).view(batch, n_kv, self.num_heads, self.head_dim).transpose(1, 2)

        scores = queries @ keys.transpose(2, 3)
        scores = scores / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            pad = context_padding_mask.unsqueeze(1).unsqueeze(2)
            scores = scores.masked_fill(pad, -torch.inf)
        weights = torch.softmax(scores, dim=-1)

        context_vec = (weights @ values).transpose(1, 2)
        context_vec = context_vec.view(batch, n_q, self.d_out)
        return self.out_proj(context_vec)
