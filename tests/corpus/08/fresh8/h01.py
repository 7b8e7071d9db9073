# expect: pass
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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, k_cache=None, v_cache=None):
        b, num_tokens, _ = x.shape
        q = self.split_heads(self.W_query(x))
        k = self.split_heads(self.W_key(x))
        v = self.split_heads(self.W_value(x))

        past = 0
        if k_cache is not None:
            past = k_cache.size(2)
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)
        total = past + num_tokens

        scores = q @ k.transpose(2, 3) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[past:total, :total], float("-inf"))
        weights = torch.softmax(scores, dim=-1)

        ctx = (weights @ v).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(ctx), k, v
