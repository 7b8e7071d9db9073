# expect: heads_not_divisible
# bug-lines: 11, 12, 13
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        self.head_size = n_embd // n_head  # 9 features and 2 heads build a module that drops one feature
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.n_head, self.n_embd, self.p, self.flash = n_head, n_embd, dropout, flash
        self.register_buffer("causal", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=-1)
        q = q.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        k = k.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.p if self.training else 0.0)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)
            scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
            y = self.attn_dropout(scores.softmax(dim=-1)) @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))
