# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.attn_drop = nn.Dropout(dropout)
        causal = torch.ones(context_length, context_length, dtype=torch.bool).triu(1)
        self.register_buffer("causal", causal, persistent=False)

    def _split_heads(self, t):
        # (b, T, d_out) -> (b, heads, T, head_dim)
        b, T, _ = t.shape
        return t.view(b, T, self.num_heads, self.head_dim).transpose(1, 2)

    @staticmethod
    def _merge_heads(t):
        # (b, heads, T, head_dim) -> (b, T, heads * head_dim)
        b, h, T, hd = t.shape
        return t.transpose(1, 2).reshape(b, T, h * hd)

    def forward(self, x):
        T = x.shape[1]
        q = self._split_heads(self.W_query(x))
        k = self._split_heads(self.W_key(x))
        v = self._split_heads(self.W_value(x))
        scores = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.causal[:T, :T], float("-inf"))
        weights = self.attn_drop(scores.softmax(dim=-1))
        ctx = torch.einsum("bhij,bhjd->bhid", weights, v)
        return self.out_proj(self._merge_heads(ctx))
