# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    """nanoGPT attention: fused QKV projection, manual or fused (flash) attention."""

    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise AssertionError("n_head must divide n_embd")
        self.n_embd = n_embd
        self.n_head = n_head
        self.dropout = dropout
        self.flash = flash
        # one matmul for q, k and v of every head, laid out [q | k | v]
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        # mixes the heads back together
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        # True above the diagonal = future = blocked
        future = torch.triu(torch.ones(block_size, block_size, dtype=torch.bool), diagonal=1)
        self.register_buffer("future", future)

    def _attend(self, q, k, v):
        T = q.size(-2)
        if self.flash:
            return F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=(self.dropout if self.training else 0.0)
            )
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        scores = scores.masked_fill(self.future[:T, :T], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = self.attn_dropout(weights)
        return torch.matmul(weights, v)

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.n_head
        qkv = self.c_attn(x)  # (B, T, 3C)
        q = qkv[..., :C]
        k = qkv[..., C:2 * C]
        v = qkv[..., 2 * C:]
        q = q.reshape(B, T, self.n_head, hs).transpose(1, 2)
        k = k.reshape(B, T, self.n_head, hs).transpose(1, 2)
        v = v.reshape(B, T, self.n_head, hs).transpose(1, 2)
        y = self._attend(q, k, v)  # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)
