# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.p_drop = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        pos = torch.arange(context_length)
        self.register_buffer("blocked", pos[None, :] > pos[:, None])

    def forward(self, x):
        B, T, _ = x.shape
        H, D = self.num_heads, self.head_dim
        q = self.W_query(x).reshape(B, T, H, D).permute(0, 2, 1, 3)
        k = self.W_key(x).reshape(B, T, H, D).permute(0, 2, 1, 3)
        v = self.W_value(x).reshape(B, T, H, D).permute(0, 2, 1, 3)

        s = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(D)
        s = s.masked_fill(self.blocked[:T, :T], float("-inf"))
        p = F.dropout(s.softmax(dim=-1), p=self.p_drop, training=self.training)
        o = torch.einsum("bhqk,bhkd->bhqd", p, v)

        o = o.permute(0, 2, 1, 3).reshape(B, T, H * D)
        return self.out_proj(o)
