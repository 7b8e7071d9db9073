# expect: flash_scaled_twice
# bug-lines: 29
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError("bad n_head")
        self.n_embd = n_embd
        self.n_head = n_head
        self.hs = n_embd // n_head
        self.p = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).bool())

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=-1)
        q, k, v = [t.view(B, T, self.n_head, self.hs).transpose(1, 2) for t in (q, k, v)]
        q = q * (1.0 / math.sqrt(self.hs))  # scale once, here
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.p if self.training else 0.0)
        else:
            att = q @ k.transpose(-2, -1)
            att = att.masked_fill(~self.bias[:T, :T], float("-inf"))
            y = self.dropout(att.softmax(-1)) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
