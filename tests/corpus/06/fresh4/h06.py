# expect: qkv_split_wrong
# bug-lines: 30, 31
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head:
            raise ValueError(f"n_embd ({n_embd}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.n_embd = n_embd
        self.head_size = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_drop = nn.Dropout(dropout)
        self.register_buffer(
            "causal_mask", torch.ones(block_size, block_size, dtype=torch.bool).tril()
        )

    def forward(self, x):
        B, T, C = x.shape
        hs = self.head_size
        qkv = self.c_attn(x).view(B, T, self.n_head, 3 * hs).transpose(1, 2)
        q, k, v = qkv.split(hs, dim=-1)

        if self.flash:
            y = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
            )
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(hs)
            scores = scores.masked_fill(~self.causal_mask[:T, :T], float("-inf"))
            y = self.attn_drop(scores.softmax(-1)) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
