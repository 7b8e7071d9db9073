# expect: pass
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
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=True)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=True)
        self.register_buffer("causal_mask", torch.ones(block_size, block_size, dtype=torch.bool).triu(1))

    def _to_heads(self, t):
        B, T, C = t.shape
        return t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def _manual(self, q, k, v):
        T = q.size(-2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        scores = scores.masked_fill(self.causal_mask[:T, :T], float("-inf"))
        probs = scores.softmax(dim=-1)
        probs = F.dropout(probs, p=self.dropout, training=self.training)
        return probs @ v

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (self._to_heads(t) for t in self.c_attn(x).chunk(3, dim=-1))
        if self.flash:
            y = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
            )
        else:
            y = self._manual(q, k, v)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
