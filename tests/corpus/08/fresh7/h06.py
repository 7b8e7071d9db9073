# expect: kv_cache_not_appended
# bug-lines: 40
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1), persistent=False)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, D = x.shape
        q = self.W_query(x).reshape(B, T, self.heads, self.head_dim).transpose(1, 2)
        k_new = self.W_key(x).reshape(B, T, self.heads, self.head_dim).transpose(1, 2)
        v_new = self.W_value(x).reshape(B, T, self.heads, self.head_dim).transpose(1, 2)

        if k_cache is None:
            keys, values = k_new, v_new
        else:
            keys = torch.cat([k_cache, k_new], dim=2)
            values = torch.cat([v_cache, v_new], dim=2)
        P = keys.shape[2] - T

        scores = torch.einsum("bhtd,bhsd->bhts", q, keys) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[P:P + T, :P + T].bool(), float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = torch.einsum("bhts,bhsd->bhtd", attn, values)
        out = out.transpose(1, 2).reshape(B, T, -1)
        return self.out_proj(out), k_new, v_new
