# expect: pass
# held-out: correct; reads c_attn's output as view(B, T, 3, nh, hs).permute(2, 0, 3, 1, 4) and unbinds q, k, v; flash path via F.sdpa.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_embd = n_embd
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.dropout = dropout
        self.flash = flash
        self.register_buffer("causal", torch.ones(block_size, block_size, dtype=torch.bool).tril(), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        qkv = self.c_attn(x).view(B, T, 3, self.n_head, hs).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0.0)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
            att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = att @ v
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)
