# expect: runtime_error
# also: out_proj_missing
# bug-lines: 31, 41
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
        batch, tgt_len, _ = x.shape
        src_len = context.shape[1]
        queries = self.W_query(x).view(batch, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(context).view(batch, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(context).view(batch, src_len, self.num_heads, self.head_dim).transpose(1, 2)

        if context_padding_mask is not None:
            padding = context_padding_mask.view(batch, 1, 1, tgt_len)
        else:
            padding = None

        scores = queries @ keys.transpose(2, 3)
        scores = scores / math.sqrt(self.head_dim)
        if padding is not None:
            scores = scores.masked_fill(padding, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context_vec = (weights @ values).transpose(1, 2)
        return context_vec.reshape(batch, tgt_len, self.d_out)
