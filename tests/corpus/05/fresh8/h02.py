# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """Non-causal multi-head attention; split/merge live in two small helpers."""

    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def _split(self, t):
        n, s, _ = t.shape
        return t.reshape(n, s, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def _merge(self, t):
        n, h, s, d = t.shape
        return t.permute(0, 2, 1, 3).reshape(n, s, h * d)

    def forward(self, X):
        q = self._split(self.w_q(X))
        k = self._split(self.w_k(X))
        v = self._split(self.w_v(X))
        att = torch.einsum("nhsd,nhtd->nhst", q, k) / math.sqrt(self.head_dim)
        att = att.softmax(dim=-1)
        out = torch.einsum("nhst,nhtd->nhsd", att, v)
        return self.w_o(self._merge(out))
