# expect: qkv_split_wrong
# bug-lines: 26
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0, "n_embd % n_head != 0"
        self.n_head = n_head
        self.n_embd = n_embd
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer("causal", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        qkv = self.c_attn(x).view(B, T, self.n_head, 3, hs)
        q, k, v = qkv.permute(3, 0, 2, 1, 4).unbind(0)  # each (B, nh, T, hs)
        if self.flash:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hs)
            att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
            att = self.attn_dropout(att.softmax(-1))
            y = torch.matmul(att, v)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)
