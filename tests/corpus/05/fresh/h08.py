# expect: heads_split_wrong
# bug-lines: 23
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

    def _heads(self, t):
        b, s, _ = t.shape
        # (b, s, hidden) -> (b, s, head_dim, heads) -> (b, heads, s, head_dim)
        return t.view(b, s, self.head_dim, self.num_heads).permute(0, 3, 1, 2)

    def forward(self, X):
        b, s, _ = X.shape
        Q, K, V = self._heads(self.w_q(X)), self._heads(self.w_k(X)), self._heads(self.w_v(X))
        weights = torch.softmax(Q @ K.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1)
        output = weights @ V  # (b, heads, s, head_dim)
        output = output.transpose(1, 2).reshape(b, s, self.hidden_size)
        return self.w_o(output)
