# expect: flash_scaled_twice
# bug-lines: 24, 28, 30
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
        self.n_head, self.n_embd, self.p, self.flash = n_head, n_embd, dropout, flash
        self.drop = nn.Dropout(dropout)
        self.register_buffer("tri", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=-1)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2) / math.sqrt(hs)  # scaled up front
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.p if self.training else 0.0)
        else:
            att = (q @ k.transpose(-2, -1)).masked_fill(~self.tri[:T, :T], float("-inf"))
            y = self.drop(att.softmax(dim=-1)) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
