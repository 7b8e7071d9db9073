# expect: heads_split_wrong
# bug-lines: 28, 29, 30
"""Exercise 5: fix the naive multi-head attention."""
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
        # X: (batch, seq_len, hidden_size)
        Q = self.w_q(X)  # (batch, seq_len, hidden_size)
        K = self.w_k(X)  # (batch, seq_len, hidden_size)
        V = self.w_v(X)  # (batch, seq_len, hidden_size)

        B, T = X.shape[0], X.shape[1]
        Q = Q.view(B, T, self.num_heads, self.head_dim)
        K = K.view(B, T, self.num_heads, self.head_dim)
        V = V.view(B, T, self.num_heads, self.head_dim)

        attention_value = torch.matmul(Q, K.transpose(-1, -2))
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = torch.matmul(attention_weight, V)

        # the merge was the bug: transpose back before viewing
        output = output.transpose(1, 2).contiguous().view(B, T, self.hidden_size)
        return self.w_o(output)
