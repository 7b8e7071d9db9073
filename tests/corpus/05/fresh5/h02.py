# expect: heads_split_wrong
# bug-lines: 21
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
        return t.unflatten(-1, (self.head_dim, self.num_heads)).permute(0, 3, 1, 2)

    def forward(self, X):
        batch, seq_len, _ = X.shape
        Q = self._heads(self.w_q(X))
        K = self._heads(self.w_k(X))
        V = self._heads(self.w_v(X))

        attention_value = torch.matmul(Q, K.transpose(-1, -2))
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = torch.matmul(attention_weight, V)

        output = output.transpose(1, 2).reshape(batch, seq_len, self.hidden_size)
        return self.w_o(output)
