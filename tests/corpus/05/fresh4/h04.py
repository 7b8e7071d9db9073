# expect: heads_merge_wrong
# bug-lines: 34
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

    def _split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, X):
        b, n, _ = X.shape
        Q = self._split(self.w_q(X))
        K = self._split(self.w_k(X))
        V = self._split(self.w_v(X))

        attention_value = Q @ K.transpose(-1, -2)
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = attention_weight @ V

        merged = output.contiguous().view(b, n, self.hidden_size)
        return self.w_o(merged)
