# expect: pass
import math

import torch
import torch.nn as nn


def repeat_kv(hidden, n_rep):
    """(B, n_kv, T, hs) -> (B, n_kv * n_rep, T, hs), each KV head n_rep times in a row (Llama's helper)."""
    B, n_kv, T, hs = hidden.shape
    if n_rep == 1:
        return hidden
    hidden = hidden[:, :, None, :, :].expand(B, n_kv, n_rep, T, hs)
    return hidden.reshape(B, n_kv * n_rep, T, hs)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} must be divisible by num_heads={num_heads}")
        if num_heads % num_kv_groups != 0:
            raise ValueError(f"num_heads={num_heads} must be divisible by num_kv_groups={num_kv_groups}")
        self.nh = num_heads
        self.nkv = num_kv_groups
        self.hs = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.nkv * self.hs, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.nkv * self.hs, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal", torch.ones(context_length, context_length, dtype=torch.bool).triu(1), persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.nh, self.hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.nkv, self.hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.nkv, self.hs).transpose(1, 2)
        k = repeat_kv(k, self.nh // self.nkv)
        v = repeat_kv(v, self.nh // self.nkv)
        s = torch.matmul(q, k.transpose(-2, -1)) * (self.hs ** -0.5)
        s = s.masked_fill(self.causal[:T, :T], float("-inf"))
        p = torch.softmax(s, dim=-1)
        y = torch.matmul(p, v).transpose(1, 2).contiguous().view(B, T, self.nh * self.hs)
        return self.out_proj(y)
