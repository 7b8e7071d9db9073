# expect: pass
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be a multiple of num_heads"
        self.n_head = num_heads
        self.hs = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        lower = torch.tril(torch.ones(context_length, context_length))
        self.register_buffer("bias", lower.view(1, 1, context_length, context_length), persistent=False)

    def _heads(self, t):
        B, T, C = t.size()
        return t.view(B, T, self.n_head, self.hs).transpose(1, 2)

    def _merge(self, t):
        B, nh, T, hs = t.size()
        return t.transpose(1, 2).reshape(B, T, nh * hs)

    @staticmethod
    def _grow(cache, new):
        # room for the old positions and the new ones, filled in order
        B, nh, P, hs = cache.shape
        T = new.size(2)
        grown = new.new_empty(B, nh, P + T, hs)
        grown[:, :, :P] = cache
        grown[:, :, P:] = new
        return grown

    def forward(self, x, k_cache=None, v_cache=None):
        T = x.size(1)
        q = self._heads(self.W_query(x))
        k = self._heads(self.W_key(x))
        v = self._heads(self.W_value(x))
        if k_cache is not None and k_cache.size(2) > 0:
            k = self._grow(k_cache, k)
            v = self._grow(v_cache, v)
        total = k.size(2)
        past = total - T

        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.hs))
        att = att.masked_fill(self.bias[:, :, past:total, :total] == 0, float("-inf"))
        att = att.softmax(dim=-1)
        y = self._merge(att @ v)
        return self.out_proj(y), k, v
