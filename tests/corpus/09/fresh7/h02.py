# expect: pass
import math

import torch
import torch.nn as nn


def repeat_kv(hidden, n_rep):
    """(B, n_kv, T, hs) -> (B, n_kv * n_rep, T, hs), each KV head n_rep times in a row."""
    batch, n_kv, seq, hs = hidden.shape
    if n_rep == 1:
        return hidden
    hidden = hidden[:, :, None, :, :].expand(batch, n_kv, n_rep, seq, hs)
    return hidden.reshape(batch, n_kv * n_rep, seq, hs)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"
        self.nh = num_heads
        self.nkv = num_kv_groups
        self.hd = d_out // num_heads
        kv_width = num_kv_groups * self.hd
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, kv_width, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, kv_width, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)), persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.W_query(x).unflatten(-1, (self.nh, self.hd)).transpose(1, 2)
        k = self.W_key(x).unflatten(-1, (self.nkv, self.hd)).transpose(1, 2)
        v = self.W_value(x).unflatten(-1, (self.nkv, self.hd)).transpose(1, 2)
        k = repeat_kv(k, self.nh // self.nkv)
        v = repeat_kv(v, self.nh // self.nkv)

        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.hd)
        scores = scores.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        probs = scores.softmax(dim=-1)
        out = torch.einsum("bhqk,bhkd->bhqd", probs, v)
        out = out.transpose(1, 2).flatten(2)
        return self.out_proj(out)
