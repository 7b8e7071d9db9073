# expect: flash_not_causal
# also: dropout_in_eval
# bug-lines: 31, 32
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head:
            raise ValueError("n_head must divide n_embd")
        self.n_head = n_head
        self.n_embd = n_embd
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.size()
        nh, hs = self.n_head, C // self.n_head
        q, k, v = self.c_attn(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, nh, hs).transpose(1, 2) for t in (q, k, v))
        if self.flash:
            p = self.dropout
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        else:
            att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hs)
            att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            att = self.attn_dropout(att.softmax(dim=-1))
            y = torch.matmul(att, v)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))
