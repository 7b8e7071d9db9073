# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError(f"n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
        self.n_embd, self.n_head = n_embd, n_head
        self.hs = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.drop = nn.Dropout(dropout)
        pos = torch.arange(block_size)
        self.register_buffer("future", pos.view(-1, 1) < pos.view(1, -1), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        # (B, T, 3C) -> (B, T, 3, nh, hs) -> (3, B, nh, T, hs)
        qkv = self.c_attn(x).view(B, T, 3, self.n_head, self.hs).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        if self.flash:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            s = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.hs)
            s = s.masked_fill(self.future[:T, :T], float("-inf"))
            a = self.drop(torch.softmax(s, dim=-1))
            y = torch.einsum("bhts,bhsd->bhtd", a, v)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)
