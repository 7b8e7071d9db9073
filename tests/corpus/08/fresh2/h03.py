# expect: pass
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
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer(
            "causal", torch.ones(context_length, context_length, dtype=torch.bool).tril(), persistent=False
        )

    def _split(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def _merge(self, t):
        B, _, T, _ = t.shape
        return t.permute(0, 2, 1, 3).reshape(B, T, self.d_out)

    def forward(self, x, k_cache=None, v_cache=None):
        T = x.shape[1]
        q = self._split(self.W_query(x))
        k_new = self._split(self.W_key(x))
        v_new = self._split(self.W_value(x))

        if k_cache is None:
            k, v = k_new, v_new
        else:
            k = torch.cat([k_cache, k_new], dim=-2)
            v = torch.cat([v_cache, v_new], dim=-2)
        past = k.shape[-2] - T

        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        visible = self.causal[past:past + T, :past + T]
        scores = scores.masked_fill(~visible, float("-inf"))
        weights = scores.softmax(dim=-1)
        y = self.out_proj(self._merge(torch.matmul(weights, v)))
        return y, k, v
