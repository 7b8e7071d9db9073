# expect: qkv_split_wrong
# bug-lines: 28, 29
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError("n_embd % n_head != 0")
        self.n_embd = n_embd
        self.n_head = n_head
        self.head_size = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_drop = nn.Dropout(dropout)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        # one fused projection: per head, its q, k and v side by side
        qkv = self.c_attn(x).view(B, T, self.n_head, 3 * self.head_size)
        q, k, v = qkv.transpose(1, 2).split(self.head_size, dim=-1)
        if self.flash:
            drop = self.dropout if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
        else:
            w = q @ k.transpose(-2, -1) * self.head_size ** -0.5
            w = w.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            w = self.attn_drop(w.softmax(dim=-1))
            out = w @ v
        out = out.transpose(1, 2).reshape(B, T, C)
        return self.c_proj(out)
