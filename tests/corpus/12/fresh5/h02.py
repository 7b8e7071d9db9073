# expect: cross_kv_from_queries
# bug-lines: 30
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.nh = num_heads
        self.hs = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def _project(self, layer, source):
        out = layer(source)
        B, N, _ = out.shape
        return out.view(B, N, self.nh, self.hs).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        q = self._project(self.W_query, x)
        k = self._project(self.W_key, context)
        v = self._project(self.W_value, x)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.hs)
        if context_padding_mask is not None:
            att = att.masked_fill(context_padding_mask.view(B, 1, 1, -1), float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, self.nh * self.hs)
        return self.out_proj(y)
