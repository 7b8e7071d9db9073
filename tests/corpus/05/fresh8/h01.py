# expect: pass
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

        # fixed: move the heads axis in front of the tokens
        Q = Q.view(Q.shape[0], Q.shape[1], self.num_heads, self.head_dim).transpose(1, 2)  # (batch, num_heads, seq_len, head_dim)
        K = K.view(K.shape[0], K.shape[1], self.num_heads, self.head_dim).transpose(1, 2)  # (batch, num_heads, seq_len, head_dim)
        V = V.view(V.shape[0], V.shape[1], self.num_heads, self.head_dim).transpose(1, 2)  # (batch, num_heads, seq_len, head_dim)

        attention_value = torch.matmul(Q, K.transpose(-1, -2))  # (batch, num_heads, seq_len, seq_len)
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = torch.matmul(attention_weight, V)  # (batch, num_heads, seq_len, head_dim)

        # fixed: heads back behind the tokens, then merge
        output = output.transpose(1, 2).contiguous().view(output.shape[0], output.shape[2], self.hidden_size)  # (batch, seq_len, hidden_size)
        return self.w_o(output)
