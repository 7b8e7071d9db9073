# expect: flash_scaled_twice
# also: heads_not_divisible
# bug-lines: 13, 27
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()  # no check that n_embd divides by n_head
        self.n_head, self.n_embd, self.p, self.flash = n_head, n_embd, dropout, flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer("causal", torch.ones(block_size, block_size, dtype=torch.bool).tril())

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        qkv = self.c_attn(x).view(B, T, 3, self.n_head, hs).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        q = q / math.sqrt(hs)  # scaled once here, for both paths
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0, is_causal=True)
        else:
            att = q @ k.transpose(-2, -1)
            att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
            y = self.attn_dropout(att.softmax(dim=-1)) @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))
