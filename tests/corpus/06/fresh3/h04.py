# expect: flash_not_causal
# bug-lines: 34
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.n_embd = n_embd
        self.dropout = dropout
        self.flash = flash
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)))

    def _heads(self, t, B, T):
        return t.view(B, T, self.n_head, -1).transpose(1, 2)

    def _manual(self, q, k, v, T):
        att = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        att = att.masked_fill(self.bias[:T, :T] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        return att @ v

    def _flash(self, q, k, v):
        drop = self.dropout if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=drop)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = self._heads(q, B, T), self._heads(k, B, T), self._heads(v, B, T)
        y = self._flash(q, k, v) if self.flash else self._manual(q, k, v, T)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
