# expect: qkv_split_wrong
# also: heads_not_divisible
# bug-lines: 14, 27
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_embd = n_embd
        self.n_head = n_head
        self.hs = n_embd // n_head
        self.p = dropout
        self.flash = flash
        self.attn_drop = nn.Dropout(dropout)
        mask = torch.triu(torch.ones(block_size, block_size), diagonal=1).bool()
        self.register_buffer("causal_mask", mask)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).view(B, T, C, 3).unbind(dim=-1)
        q = q.view(B, T, self.n_head, self.hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, self.hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.hs).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=self.p if self.training else 0.0
            )
        else:
            att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.hs)
            att = att.masked_fill(self.causal_mask[:T, :T], float("-inf"))
            att = self.attn_drop(F.softmax(att, dim=-1))
            y = torch.matmul(att, v)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)
