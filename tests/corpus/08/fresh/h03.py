# expect: kv_cache_mask_offset
# bug-lines: 35
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.nh = num_heads
        self.hs = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def _split(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.nh, self.hs).transpose(1, 2)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        q = self._split(self.W_query(x))
        k = self._split(self.W_key(x))
        v = self._split(self.W_value(x))
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)
        att = q @ k.transpose(-2, -1)
        if k_cache is None:
            # prompt: causal mask; when decoding, every cached key is in the past anyway
            att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = torch.softmax(att / math.sqrt(self.hs), dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y), k, v
