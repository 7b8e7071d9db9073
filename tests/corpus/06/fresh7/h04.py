# expect: flash_scaled_twice
# bug-lines: 35
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head:
            raise ValueError("n_head must divide n_embd")
        self.n_embd = n_embd
        self.n_head = n_head
        self.dropout = dropout
        self.flash = flash
        self.scale = 1.0 / math.sqrt(n_embd // n_head)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        mask = torch.triu(torch.ones(block_size, block_size, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask)

    def _shape(self, t, B, T):
        return t.view(B, T, self.n_head, self.n_embd // self.n_head).transpose(1, 2)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=-1)
        q, k, v = self._shape(q, B, T), self._shape(k, B, T), self._shape(v, B, T)

        if self.flash:
            q = q * self.scale
            y = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
            )
        else:
            att = torch.matmul(q, k.transpose(-2, -1)) * self.scale
            att = att.masked_fill(self.mask[:T, :T], float("-inf"))
            att = self.attn_dropout(torch.softmax(att, dim=-1))
            y = torch.matmul(att, v)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)
