# expect: no_scaling
# bug-lines: 30
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        batch, t_len, _ = x.shape
        s_len = context.shape[1]
        queries = self.W_query(x).view(batch, t_len, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(context).view(batch, s_len, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(context).view(batch, s_len, self.num_heads, self.head_dim).transpose(1, 2)

        scores = torch.matmul(queries, keys.transpose(-2, -1))
        scores.div(math.sqrt(self.head_dim))
        if context_padding_mask is not None:
            scores = scores.masked_fill(context_padding_mask[:, None, None, :], -torch.inf)
        weights = torch.softmax(scores, dim=-1)

        context_vec = torch.matmul(weights, values).transpose(1, 2).reshape(batch, t_len, self.d_out)
        return self.out_proj(context_vec)
