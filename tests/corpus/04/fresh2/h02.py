# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.h = num_heads
        self.dh = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.attn_dropout = nn.Dropout(dropout)
        idx = torch.arange(context_length)
        self.register_buffer("future", idx[None, :] > idx[:, None])

    def _heads(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.h, self.dh).permute(0, 2, 1, 3)

    def forward(self, x):
        B, T, _ = x.shape
        q = self._heads(self.W_query(x))
        k = self._heads(self.W_key(x))
        v = self._heads(self.W_value(x))
        logits = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.dh)
        logits = logits.masked_fill(self.future[:T, :T], float("-inf"))
        probs = self.attn_dropout(logits.softmax(-1))
        ctx = torch.einsum("bhqk,bhkd->bhqd", probs, v)
        ctx = ctx.permute(0, 2, 1, 3).reshape(B, T, self.d_out)
        return self.out_proj(ctx)
