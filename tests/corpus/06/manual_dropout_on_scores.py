# expect: dropout_misplaced
# bug-lines: 40, 41, 42
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError(f"n_embd ({n_embd}) must be divisible by n_head ({n_head})")
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)  # query, key, value projections for all heads, in one matmul
        self.c_proj = nn.Linear(n_embd, n_embd)  # output projection
        self.attn_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.n_embd = n_embd
        self.dropout = dropout
        self.flash = flash
        # True on and below the diagonal = may attend; nanoGPT calls this buffer "bias"
        mask = torch.tril(torch.ones(block_size, block_size, dtype=torch.bool))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size), persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        assert T <= self.bias.size(-1), f"{T} tokens exceed block_size {self.bias.size(-1)}"
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)  # 3 × (B, T, C), in the order q, k, v
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        if self.flash:
            # fused kernel: scales by 1/sqrt(hs), masks the future, drops weights only while training
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0.0)  # (B, nh, T, hs)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
            att = att.masked_fill(~self.bias[:, :, :T, :T], float("-inf"))
            att = self.attn_dropout(att)
            att = F.softmax(att, dim=-1)
            y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C): heads side by side again
        return self.c_proj(y)
