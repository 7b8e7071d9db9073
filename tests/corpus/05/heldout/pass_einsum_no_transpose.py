# expect: pass
# held-out: correct fix without any transpose; keeps (b, t, h, d) and lets einsum index the heads, then views back.
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
        b, t, _ = X.shape
        Q = self.w_q(X).view(b, t, self.num_heads, self.head_dim)
        K = self.w_k(X).view(b, t, self.num_heads, self.head_dim)
        V = self.w_v(X).view(b, t, self.num_heads, self.head_dim)
        scores = torch.einsum("bqhd,bkhd->bhqk", Q, K) / math.sqrt(self.head_dim)
        weights = torch.softmax(scores, dim=-1)
        output = torch.einsum("bhqk,bkhd->bqhd", weights, V).reshape(b, t, self.hidden_size)
        return self.w_o(output)
