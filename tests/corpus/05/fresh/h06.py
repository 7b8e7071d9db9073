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
        b, s, _ = X.shape
        Q = self.w_q(X).view(b, s, self.num_heads, self.head_dim)
        K = self.w_k(X).view(b, s, self.num_heads, self.head_dim)
        V = self.w_v(X).view(b, s, self.num_heads, self.head_dim)
        # attend over the sequence axis, separately for each head
        scores = torch.einsum("bqhd,bkhd->bhqk", Q, K) / math.sqrt(self.head_dim)
        weights = torch.softmax(scores, dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, V)
        out = out.reshape(b, s, self.hidden_size)
        return self.w_o(out)
