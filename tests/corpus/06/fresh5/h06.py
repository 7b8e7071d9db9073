# expect: dropout_in_eval
# bug-lines: 30
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError("n_embd must be a multiple of n_head")
        self.n_head = n_head
        self.n_embd = n_embd
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("tri", torch.ones(block_size, block_size).tril().bool(), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=-1)
        q = q.reshape(B, T, self.n_head, hs).transpose(1, 2)
        k = k.reshape(B, T, self.n_head, hs).transpose(1, 2)
        v = v.reshape(B, T, self.n_head, hs).transpose(1, 2)
        p_drop = self.dropout if self.train else 0.0
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p_drop, is_causal=True)
        else:
            scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(hs)
            scores = scores.masked_fill(~self.tri[:T, :T], float("-inf"))
            probs = F.dropout(scores.softmax(-1), p=p_drop)
            y = torch.einsum("bhqk,bhkd->bhqd", probs, v)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)
