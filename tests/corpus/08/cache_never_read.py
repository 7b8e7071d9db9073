# expect: kv_cache_ignored
# also: kv_cache_not_appended
# bug-lines: 24
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("future", torch.ones(context_length, context_length).triu(1).bool(), persistent=False)

    def forward(self, x, k_cache=None, v_cache=None):
        b, t, _ = x.shape
        heads = [w(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2) for w in (self.W_query, self.W_key, self.W_value)]
        q, k, v = heads  # the cache arguments are accepted, then never read
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.future[:t, :t], float("-inf"))
        y = scores.softmax(dim=-1) @ v
        y = y.transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(y), k, v
