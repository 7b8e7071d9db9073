# expect: kv_cache_order
# bug-lines: 32, 33
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal", torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x, k_cache=None, v_cache=None):
        b, t, _ = x.shape
        nh, hd = self.num_heads, self.head_dim
        queries = self.W_query(x).view(b, t, nh, hd).transpose(1, 2)
        keys = self.W_key(x).view(b, t, nh, hd).transpose(1, 2)
        values = self.W_value(x).view(b, t, nh, hd).transpose(1, 2)

        past = 0 if k_cache is None else k_cache.shape[2]
        if k_cache is not None:
            # append to the cache
            keys = torch.cat((keys, k_cache), dim=2)
            values = torch.cat((values, v_cache), dim=2)

        total = past + t
        att = torch.einsum("bhqd,bhkd->bhqk", queries, keys) / math.sqrt(hd)
        allowed = self.causal[past:total, :total]
        att = att.masked_fill(~allowed, float("-inf"))
        att = att.softmax(dim=-1)
        out = torch.einsum("bhqk,bhkd->bhqd", att, values)
        out = out.transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(out), keys, values
