# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, X):
        # unflatten the features into (heads, head_dim) and index everything with einsum:
        # no transpose needed, the letters say which axis is which.
        Q = self.w_q(X).unflatten(-1, (self.num_heads, self.head_dim))  # b t h d
        K = self.w_k(X).unflatten(-1, (self.num_heads, self.head_dim))
        V = self.w_v(X).unflatten(-1, (self.num_heads, self.head_dim))
        scores = torch.einsum("bthd,bshd->bhts", Q, K) / math.sqrt(self.head_dim)
        weights = scores.softmax(dim=-1)
        out = torch.einsum("bhts,bshd->bthd", weights, V)
        return self.w_o(out.flatten(-2))
