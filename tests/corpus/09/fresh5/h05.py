# expect: scale_wrong_dim
# also: heads_merge_wrong
# bug-lines: 24, 39
import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        if num_heads % num_kv_groups != 0:
            raise ValueError("num_heads must be divisible by num_kv_groups")
        head_dim = d_out // num_heads
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = head_dim
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.scaling = self.W_key.out_features ** -0.5
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        B, T, _ = x.shape
        rep = self.num_heads // self.num_kv_groups
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.scaling
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        probs = scores.softmax(dim=-1)
        ctx = torch.einsum("bhqk,bhkd->bhqd", probs, v)
        ctx = ctx.reshape(B, T, self.d_out)
        return self.out_proj(ctx)
