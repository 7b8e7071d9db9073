# expect: padding_mask_inverted
# bug-lines: 30
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{d_out} is not a multiple of {num_heads}")
        self.nh = num_heads
        self.hs = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        q = self.W_query(x).reshape(B, T, self.nh, self.hs).permute(0, 2, 1, 3)
        k = self.W_key(context).reshape(B, S, self.nh, self.hs).permute(0, 2, 1, 3)
        v = self.W_value(context).reshape(B, S, self.nh, self.hs).permute(0, 2, 1, 3)
        att = q @ k.transpose(-1, -2) * self.hs ** -0.5
        if context_padding_mask is not None:
            keep = context_padding_mask.view(B, 1, 1, S)   # which context tokens can be attended to
            att = att.masked_fill(keep == 0, float("-inf"))
        att = att.softmax(dim=-1)
        y = (att @ v).permute(0, 2, 1, 3).reshape(B, T, self.d_out)
        return self.out_proj(y)
