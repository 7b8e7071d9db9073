# expect: kv_cache_not_appended
# bug-lines: 41
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def heads(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        q = self.heads(self.W_query(x))
        k_new = self.heads(self.W_key(x))
        v_new = self.heads(self.W_value(x))
        P = 0 if k_cache is None else k_cache.size(2)

        k_all = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=2)
        v_all = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=2)

        s = torch.matmul(q, k_all.transpose(-2, -1)) * self.head_dim ** -0.5
        s = s.masked_fill(self.mask[P:P + T, :P + T], float("-inf"))
        a = torch.softmax(s, dim=-1)
        y = torch.matmul(a, v_all).transpose(1, 2).reshape(B, T, self.d_out)
        # hand back the keys/values of this step for the next call
        return self.out_proj(y), k_new, v_new
