# expect: kv_cache_mask_offset
# bug-lines: 36
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal_mask", torch.ones(context_length, context_length).triu(1).bool())

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, k_cache=None, v_cache=None):
        b, n, _ = x.shape
        queries = self.split(self.W_query(x))
        keys = self.split(self.W_key(x))
        values = self.split(self.W_value(x))
        if k_cache is not None:
            keys = torch.cat((k_cache, keys), dim=2)
            values = torch.cat((v_cache, values), dim=2)
        total = keys.shape[2]

        future = self.causal_mask[:n, :n]
        scores = torch.matmul(queries, keys.transpose(-1, -2))
        scores = scores / self.head_dim ** 0.5
        scores = scores.masked_fill(future, -torch.inf)
        weights = torch.softmax(scores, dim=-1)

        out = torch.matmul(weights, values).permute(0, 2, 1, 3).reshape(b, n, -1)
        return self.out_proj(out), keys, values
