# expect: kv_cache_order
# bug-lines: 12
import math

import torch
import torch.nn as nn


def _grow(cache, new):
    if cache is None:
        return new
    return torch.cat([new, cache], dim=2)


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("blocked", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        heads = lambda t: t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        q = heads(self.W_query(x))
        k = _grow(k_cache, heads(self.W_key(x)))
        v = _grow(v_cache, heads(self.W_value(x)))
        total = k.shape[2]
        past = total - T
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        s = s.masked_fill(self.blocked[past:total, :total], float("-inf"))
        a = torch.softmax(s, dim=-1)
        y = torch.matmul(a, v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y), k, v
