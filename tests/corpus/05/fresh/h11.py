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
        Q = self.w_q(X)
        K = self.w_k(X)
        V = self.w_v(X)
        outs = []
        # head i owns features [i * head_dim, (i + 1) * head_dim)
        for q, k, v in zip(Q.split(self.head_dim, dim=-1), K.split(self.head_dim, dim=-1), V.split(self.head_dim, dim=-1)):
            w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1)
            outs.append(w @ v)
        return self.w_o(torch.cat(outs, dim=-1))
