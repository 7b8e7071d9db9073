# expect: kv_cache_not_appended
# bug-lines: 46
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)
        )

    def heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, k_cache=None, v_cache=None):
        b, T, _ = x.shape
        q = self.heads(self.W_query(x))
        k_new = self.heads(self.W_key(x))
        v_new = self.heads(self.W_value(x))

        if k_cache is None:
            k_all, v_all = k_new, v_new
        else:
            k_all = torch.cat([k_cache, k_new], dim=2)
            v_all = torch.cat([v_cache, v_new], dim=2)
        P = k_all.size(2) - T

        scores = q @ k_all.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[P:P + T, :P + T], float("-inf"))
        weights = scores.softmax(dim=-1)
        context = (weights @ v_all).transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(context), k_new, v_new
