# expect: pass
"""Fused-QKV causal attention: one view into (B, T, 3, nh, hs), a bool future-mask buffer."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError(f"n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
        self.n_embd, self.n_head, self.hs = n_embd, n_head, n_embd // n_head
        self.dropout, self.flash = dropout, flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        future = torch.ones(block_size, block_size, dtype=torch.bool).triu(1)
        self.register_buffer("future", future, persistent=False)

    def _manual(self, q, k, v):
        T = q.size(-2)
        scores = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(self.hs)
        scores = torch.where(self.future[:T, :T], float("-inf"), scores)
        probs = torch.softmax(scores, dim=-1)
        probs = F.dropout(probs, p=self.dropout, training=self.training)
        return torch.einsum("bhij,bhjd->bhid", probs, v)

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.c_attn(x).view(B, T, 3, self.n_head, self.hs).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # each (B, nh, T, hs)
        if self.flash:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            y = self._manual(q, k, v)
        y = y.permute(0, 2, 1, 3).reshape(B, T, C)
        return self.c_proj(y)
