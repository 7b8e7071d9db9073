# expect: kv_cache_mask_offset
# held-out: applies the causal mask only on the prompt pass (no cache), assuming decoding steps never need it; chunks then see their own future.
# bug-lines: 31, 32, 37, 38
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        nh, hs = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, nh, hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, nh, hs).transpose(1, 2)
        att_mask = None
        if k_cache is None:
            att_mask = self.mask[:T, :T]
        else:
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)
        att = q @ k.transpose(-2, -1) / math.sqrt(hs)
        if att_mask is not None:
            att = att.masked_fill(att_mask, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y), k, v
