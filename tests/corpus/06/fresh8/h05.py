# expect: flash_scaled_twice
# bug-lines: 30, 35
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_embd = n_embd
        self.n_head = n_head
        self.head_size = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("causal", torch.ones(block_size, block_size).tril().bool())

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=-1)
        q = q.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        k = k.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        q = q / math.sqrt(self.head_size)  # scale once, up front, for both paths
        if self.flash:
            drop = self.dropout if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
        else:
            att = q @ k.transpose(-2, -1)
            att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
            out = self.drop(torch.softmax(att, dim=-1)) @ v
        out = out.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(out)
