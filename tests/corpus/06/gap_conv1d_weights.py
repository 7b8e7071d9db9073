# expect: api_mismatch
# bug-lines: 14, 26, 27
import math

import torch
import torch.nn as nn


class Conv1D(nn.Module):
    """Hugging Face's GPT-2 layer: a linear layer whose weight is stored (in, out)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.size(-1)), self.weight).view(*x.shape[:-1], -1)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head:
            raise ValueError("n_embd must be divisible by n_head")
        self.c_attn = Conv1D(3 * n_embd, n_embd)
        self.c_proj = Conv1D(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        hs = C // self.n_head
        q, k, v = (t.view(B, T, self.n_head, hs).transpose(1, 2) for t in (q, k, v))
        w = q @ k.transpose(-1, -2) / math.sqrt(hs)
        w = w.masked_fill(~self.bias[:T, :T], float("-inf"))
        y = self.attn_dropout(w.softmax(-1)) @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))
