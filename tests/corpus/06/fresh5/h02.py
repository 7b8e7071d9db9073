# expect: qkv_split_order
# bug-lines: 27
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError("n_embd must be divisible by n_head")
        self.n_embd, self.n_head = n_embd, n_head
        self.hs = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer("causal", torch.ones(block_size, block_size, dtype=torch.bool).tril())

    def forward(self, x):
        B, T, C = x.shape
        chunks = self.c_attn(x).chunk(3, dim=-1)
        v, k, q = [c.view(B, T, self.n_head, self.hs).transpose(1, 2) for c in chunks]
        if self.flash:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            att = q @ k.transpose(-2, -1) / math.sqrt(self.hs)
            att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
            att = self.attn_dropout(att.softmax(dim=-1))
            y = att @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))
