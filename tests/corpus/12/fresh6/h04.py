# expect: padding_mask_inverted
# also: out_proj_missing
# bug-lines: 33, 36
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("num_heads must divide d_out")
        self.d_out = d_out
        self.n_heads = num_heads
        self.hd = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        b, t, _ = x.shape
        s = context.shape[1]
        q = self.W_query(x).view(b, t, self.n_heads, self.hd).transpose(1, 2)
        k = self.W_key(context).view(b, s, self.n_heads, self.hd).transpose(1, 2)
        v = self.W_value(context).view(b, s, self.n_heads, self.hd).transpose(1, 2)

        att = q @ k.transpose(-2, -1) / math.sqrt(self.hd)
        if context_padding_mask is not None:
            real = context_padding_mask[:, None, None, :]
            att = att.masked_fill(~real, float("-inf"))
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, self.d_out)
        return y
