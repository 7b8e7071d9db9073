# expect: heads_not_divisible
# bug-lines: 13
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, T, _ = x.shape
        q = self.W_query(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, T, self.num_kv_groups, self.head_dim).transpose(1, 2)

        # (b, nkv, T, hs) -> (b, nkv, g, T, hs): each query group against its kv head
        q = q.view(b, self.num_kv_groups, self.group_size, T, self.head_dim)
        scores = torch.einsum("bkgqd,bksd->bkgqs", q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T].bool(), float("-inf"))
        weights = scores.softmax(dim=-1)
        ctx = torch.einsum("bkgqs,bksd->bkgqd", weights, v)
        ctx = ctx.reshape(b, self.num_heads, T, self.head_dim).transpose(1, 2)
        return self.out_proj(ctx.reshape(b, T, self.d_out))
