# expect: kv_cache_order
# bug-lines: 28, 29
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out, self.num_heads = d_out, num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, k_cache=None, v_cache=None):
        b, t, _ = x.shape
        heads = lambda z: z.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        if k_cache is not None:
            # append the cache to the new entries
            k = torch.cat([k, k_cache], dim=2)
            v = torch.cat([v, v_cache], dim=2)
        n = k.size(2)
        p = n - t
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        att = att.masked_fill(self.mask.bool()[p:n, :n], -torch.inf)
        att = att.softmax(dim=-1)
        out = (att @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)
        return self.out_proj(out), k, v
