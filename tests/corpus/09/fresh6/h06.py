# expect: scale_wrong_dim
# bug-lines: 19
import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be a multiple of num_heads")
        if num_heads % num_kv_groups:
            raise ValueError("num_heads must be a multiple of num_kv_groups")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.kv_dim = num_kv_groups * self.head_dim
        self.scale = self.kv_dim ** -0.5

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.kv_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.kv_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal_mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)

        g = self.num_heads // self.num_kv_groups
        k = k[:, :, None].expand(B, self.num_kv_groups, g, T, self.head_dim).reshape(B, self.num_heads, T, self.head_dim)
        v = v[:, :, None].expand(B, self.num_kv_groups, g, T, self.head_dim).reshape(B, self.num_heads, T, self.head_dim)

        att = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.scale
        att = att.masked_fill(self.causal_mask[:T, :T], float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = torch.einsum("bhqk,bhkd->bhqd", att, v)
        return self.out_proj(y.transpose(1, 2).reshape(B, T, self.d_out))
