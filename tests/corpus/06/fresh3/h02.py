# expect: qkv_split_order
# bug-lines: 27
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head:
            raise ValueError("n_embd must be divisible by n_head")
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        self.dropout, self.flash = dropout, flash
        self.attn_drop = nn.Dropout(dropout)
        mask = torch.ones(block_size, block_size, dtype=torch.bool).tril()
        self.register_buffer("mask", mask)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        qkv = self.c_attn(x)
        k, q, v = qkv.chunk(3, dim=-1)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        p = self.dropout if self.training else 0.0
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            s = q @ k.transpose(-2, -1) / math.sqrt(hs)
            s = s.masked_fill(~self.mask[:T, :T], float("-inf"))
            y = self.attn_drop(s.softmax(dim=-1)) @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))
