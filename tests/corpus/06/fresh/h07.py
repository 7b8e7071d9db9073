# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head:
            raise ValueError(f"n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
        self.n_embd = n_embd
        self.n_head = n_head
        self.hs = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_drop = nn.Dropout(dropout)
        i = torch.arange(block_size)
        self.register_buffer("allowed", i[:, None] >= i[None, :], persistent=False)

    def _heads(self, t, B, T):
        return t.reshape(B, T, self.n_head, self.hs).permute(0, 2, 1, 3)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (self._heads(t, B, T) for t in self.c_attn(x).chunk(3, dim=-1))
        if self.flash:
            drop = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
        else:
            s = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.hs)
            s = torch.where(self.allowed[:T, :T], s, torch.full_like(s, float("-inf")))
            w = self.attn_drop(torch.softmax(s, dim=-1))
            y = torch.einsum("bhts,bhsd->bhtd", w, v)
        y = y.permute(0, 2, 1, 3).reshape(B, T, C)
        return self.c_proj(y)
