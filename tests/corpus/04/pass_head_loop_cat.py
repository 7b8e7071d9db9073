# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """One head at a time: slice each head's features, attend, concatenate."""

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
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "causal_mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        )

    def forward(self, x):
        T = x.shape[1]
        q_all = self.W_query(x)
        k_all = self.W_key(x)
        v_all = self.W_value(x)
        blocked = self.causal_mask[:T, :T]
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q, k, v = q_all[..., cols], k_all[..., cols], v_all[..., cols]
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
            scores = scores.masked_fill(blocked, float("-inf"))
            weights = self.dropout(torch.softmax(scores, dim=-1))
            heads.append(weights @ v)
        return self.out_proj(torch.cat(heads, dim=-1))
