# expect: kv_cache_not_appended
# bug-lines: 43
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.n_head = num_heads
        self.hs = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("tri", torch.tril(torch.ones(context_length, context_length)))

    def split(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.n_head, self.hs).transpose(1, 2)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        q = self.split(self.W_query(x))
        k = self.split(self.W_key(x))
        v = self.split(self.W_value(x))

        keys, values = k, v
        if k_cache is not None:
            keys = torch.cat([k_cache, k], dim=2)
            values = torch.cat([v_cache, v], dim=2)
        P = keys.size(2) - T

        att = q @ keys.transpose(-2, -1) * (1.0 / math.sqrt(self.hs))
        att = att.masked_fill(self.tri[P:P + T, :P + T] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        ctx = (att @ values).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(ctx), k, v
