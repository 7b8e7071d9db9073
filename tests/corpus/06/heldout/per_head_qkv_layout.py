# expect: qkv_split_wrong
# held-out: reads c_attn's output GPT-NeoX style as per-head [q_h | k_h | v_h] blocks, view(B, T, nh, 3*hs), instead of [q | k | v].
# bug-lines: 26, 27
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_embd, self.n_head = n_embd, n_head
        self.head_size = n_embd // n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.dropout = dropout
        self.flash = flash
        self.register_buffer("mask", torch.triu(torch.ones(block_size, block_size, dtype=torch.bool), 1))

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.c_attn(x).view(B, T, self.n_head, 3 * self.head_size)
        q, k, v = qkv.split(self.head_size, dim=-1)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0.0)
        else:
            att = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)
            att = att.masked_fill(self.mask[:T, :T], float("-inf"))
            att = self.attn_dropout(att.softmax(dim=-1))
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
