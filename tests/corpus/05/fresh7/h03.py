# expect: heads_split_wrong
# bug-lines: 22
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
        batch, seq_len, _ = t.shape
        return t.reshape(batch, self.num_heads, seq_len, self.head_dim)

    def _merge(self, t):
        batch, _, seq_len, _ = t.shape
        return t.transpose(1, 2).reshape(batch, seq_len, self.hidden_size)

    def forward(self, X):
        Q = self._split(self.w_q(X))
        K = self._split(self.w_k(X))
        V = self._split(self.w_v(X))

        attention_value = torch.matmul(Q, K.transpose(-1, -2))
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = torch.matmul(attention_weight, V)
        return self.w_o(self._merge(output))
