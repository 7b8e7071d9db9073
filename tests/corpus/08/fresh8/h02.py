# expect: pass
"""KV-cache attention: the cache is copied into a freshly allocated buffer, the mask is built from positions."""
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be a multiple of num_heads"
        self.nh = num_heads
        self.hs = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    @staticmethod
    def grow(cache, new):
        if cache is None:
            return new
        B, nh, P, hs = cache.shape
        buf = new.new_empty(B, nh, P + new.size(2), hs)
        buf[:, :, :P] = cache
        buf[:, :, P:] = new
        return buf

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        q = self.W_query(x).reshape(B, T, self.nh, self.hs).permute(0, 2, 1, 3)
        k = self.W_key(x).reshape(B, T, self.nh, self.hs).permute(0, 2, 1, 3)
        v = self.W_value(x).reshape(B, T, self.nh, self.hs).permute(0, 2, 1, 3)

        P = 0 if k_cache is None else k_cache.shape[2]
        k = self.grow(k_cache, k)
        v = self.grow(v_cache, v)

        att = torch.einsum("bhtd,bhsd->bhts", q, k) * self.hs ** -0.5
        q_pos = torch.arange(P, P + T, device=x.device)[:, None]
        k_pos = torch.arange(P + T, device=x.device)[None, :]
        att = att.masked_fill(k_pos > q_pos, float("-inf"))
        att = att.softmax(dim=-1)

        y = torch.einsum("bhts,bhsd->bhtd", att, v)
        y = y.permute(0, 2, 1, 3).reshape(B, T, self.nh * self.hs)
        return self.out_proj(y), k, v
