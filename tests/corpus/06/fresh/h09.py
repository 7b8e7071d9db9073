# expect: heads_merge_wrong
# bug-lines: 36
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
        self.register_buffer("mask", torch.triu(torch.ones(block_size, block_size), diagonal=1).bool())

    def forward(self, x):
        B, T, C = x.size()
        nh = self.n_head
        q, k, v = self.c_attn(x).split(C, dim=-1)
        q = q.view(B, T, nh, C // nh).transpose(1, 2)
        k = k.view(B, T, nh, C // nh).transpose(1, 2)
        v = v.view(B, T, nh, C // nh).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(C // nh)
            scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
            y = self.attn_dropout(scores.softmax(dim=-1)) @ v
        y = y.contiguous().view(B, T, C)
        return self.c_proj(y)
