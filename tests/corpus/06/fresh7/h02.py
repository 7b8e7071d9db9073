# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError(f"n_embd={n_embd} is not divisible by n_head={n_head}")
        self.n_embd = n_embd
        self.n_head = n_head
        self.head_size = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.scale = self.head_size ** -0.5
        future = torch.ones(block_size, block_size, dtype=torch.bool).triu(diagonal=1)
        self.register_buffer("future", future, persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.c_attn(x).view(B, T, 3, self.n_head, self.head_size)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (B, nh, T, hs)
        p = self.dropout if self.training else 0.0
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            att = torch.matmul(q, k.transpose(-1, -2)) * self.scale
            att = att.masked_fill(self.future[:T, :T], float("-inf"))
            att = att.softmax(dim=-1)
            att = F.dropout(att, p=p, training=self.training)
            y = torch.matmul(att, v)
        y = y.permute(0, 2, 1, 3).reshape(B, T, C)
        return self.c_proj(y)
