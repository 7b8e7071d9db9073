# expect: qkv_split_wrong
# bug-lines: 28
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0, "n_embd % n_head != 0"
        self.n_embd = n_embd
        self.n_head = n_head
        self.head_size = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer("causal_mask", torch.triu(torch.ones(block_size, block_size), 1).bool())

    def forward(self, x):
        B, T, C = x.size()
        hs = self.head_size
        # one reshape for all three: (B, T, nh, 3*hs) -> three (B, T, nh, hs)
        qkv = self.c_attn(x).view(B, T, self.n_head, 3 * hs)
        q, k, v = qkv.split(hs, dim=-1)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))

        if self.flash:
            y = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
            )
        else:
            att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hs)
            att = att.masked_fill(self.causal_mask[:T, :T], float("-inf"))
            att = self.attn_dropout(torch.softmax(att, dim=-1))
            y = torch.matmul(att, v)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
