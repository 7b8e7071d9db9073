# expect: mask_inverted
# bug-lines: 35
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        if num_heads % num_kv_groups:
            raise ValueError("num_heads must be divisible by num_kv_groups")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        # lower triangle: the positions each token is allowed to see
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x):
        B, T, _ = x.shape
        H, G, D = self.num_heads, self.num_kv_groups, self.head_dim
        q = self.W_query(x).view(B, T, H, D).transpose(1, 2)
        k = self.W_key(x).view(B, T, G, D).transpose(1, 2).repeat_interleave(H // G, dim=1)
        v = self.W_value(x).view(B, T, G, D).transpose(1, 2).repeat_interleave(H // G, dim=1)

        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(out)
