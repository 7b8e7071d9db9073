# expect: heads_split_wrong
# from the fresh held-out round of issue 21: the split reads the features as (head_dim, num_heads), so each head gets every num_heads-th feature instead of a contiguous block.
# bug-lines: 21
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def split(self, t):
        return t.reshape(t.shape[0], t.shape[1], self.head_dim, self.num_heads).transpose(1, 3).transpose(2, 3)

    def forward(self, X):
        B, T, C = X.shape
        Q, K, V = self.split(self.w_q(X)), self.split(self.w_k(X)), self.split(self.w_v(X))
        weights = (Q @ K.transpose(-2, -1) / math.sqrt(self.head_dim)).softmax(dim=-1)
        out = (weights @ V).transpose(1, 2).reshape(B, T, C)
        return self.w_o(out)
