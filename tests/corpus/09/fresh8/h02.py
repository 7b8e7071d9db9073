# expect: pass
"""GQA without materialising repeated keys: the query heads are grouped and broadcast against their KV head."""
import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0 and num_heads % num_kv_groups == 0, "sizes do not divide"
        self.h = num_heads
        self.g = num_kv_groups
        self.hd = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.hd, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.hd, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        B, T, _ = x.shape
        per = self.h // self.g
        # query head index = kv_head * per + j
        q = self.W_query(x).reshape(B, T, self.g, per, self.hd)
        k = self.W_key(x).reshape(B, T, self.g, self.hd)
        v = self.W_value(x).reshape(B, T, self.g, self.hd)

        s = torch.einsum("btgjd,bsgd->bgjts", q, k) / self.hd ** 0.5
        s = s.masked_fill(~self.causal[:T, :T], float("-inf"))
        p = s.softmax(dim=-1)
        o = torch.einsum("bgjts,bsgd->btgjd", p, v)
        return self.out_proj(o.reshape(B, T, self.h * self.hd))
