# expect: qkv_split_wrong
# also: mask_not_sliced
# bug-lines: 29, 30, 35
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_embd, self.n_head = n_embd, n_head
        self.dropout, self.flash = dropout, flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_drop = nn.Dropout(dropout)
        self.register_buffer(
            "mask",
            torch.triu(torch.full((block_size, block_size), float("-inf")), diagonal=1),
        )

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        # each head gets its own [q | k | v] slice of c_attn's output
        qkv = self.c_attn(x).view(B, T, self.n_head, 3 * hs).transpose(1, 2)
        q, k, v = qkv.split(hs, dim=-1)
        if self.flash:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            att = q @ k.transpose(-2, -1) / math.sqrt(hs) + self.mask
            att = self.attn_drop(F.softmax(att, dim=-1))
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
