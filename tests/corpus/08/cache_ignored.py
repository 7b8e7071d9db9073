# expect: kv_cache_ignored
# bug-lines: 34, 36, 39
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
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)  # True above the diagonal = future

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        nh, hs = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs): only the new tokens ask
        k = self.W_key(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = self.W_value(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        k_all, v_all = k, v
        if k_cache is not None:
            k_all = torch.cat([k_cache, k], dim=2)  # (B, nh, P + T, hs): returned as the new cache
            v_all = torch.cat([v_cache, v], dim=2)
        P = 0  # attend within the new tokens  # positions already in the cache; the new tokens sit at P .. P + T - 1
        assert P + T <= self.mask.size(0), f"{P + T} tokens exceed context_length {self.mask.size(0)}"
        att = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T, P + T)
        att = att.masked_fill(self.mask[P : P + T, : P + T], float("-inf"))  # the new tokens' rows of the mask
        att = torch.softmax(att, dim=-1)
        y = att @ v  # (B, nh, T, P + T) x (B, nh, P + T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)  # (B, T, d_out)
        return self.out_proj(y), k_all, v_all
