# expect: softmax_wrong_dim
# also: out_proj_missing
# bug-lines: 35, 38
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        nh, hs = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, nh, hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, nh, hs).transpose(1, 2)
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=-2)
            v = torch.cat([v_cache, v], dim=-2)
        P = k.shape[-2] - T
        att = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(hs)
        att = att.masked_fill(self.mask[P:P + T, :P + T], float("-inf"))
        att = att.softmax(dim=-2)
        y = torch.einsum("bhts,bhsd->bhtd", att, v)
        y = y.transpose(1, 2).reshape(B, T, nh * hs)
        return y, k, v
