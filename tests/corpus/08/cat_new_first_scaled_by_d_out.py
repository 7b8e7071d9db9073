# expect: kv_cache_order
# also: scale_wrong_dim
# from the fresh held-out round of issue 21: two mistakes, the cache concatenated new-first and the scores scaled by √d_out; the full pass (no cache) shows only the scale, the decoding steps the cache too, which comes first in the forward.
# bug-lines: 28, 29
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
        self.register_buffer("causal", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        heads = lambda t: t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        P = 0
        if k_cache is not None:
            P = k_cache.size(2)
            k = torch.cat((k, k_cache), dim=2)
            v = torch.cat((v, v_cache), dim=2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        scores = scores.masked_fill(self.causal[P:P + T, :P + T], float("-inf"))
        y = scores.softmax(dim=-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T, self.d_out)), k, v
