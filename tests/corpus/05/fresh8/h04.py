# expect: heads_merge_wrong
# bug-lines: 30
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
        batch, seq_len, _ = X.shape
        Q = self.w_q(X).view(batch, seq_len, self.num_heads, self.head_dim).transpose(1, 2)
        K = self.w_k(X).view(batch, seq_len, self.num_heads, self.head_dim).transpose(1, 2)
        V = self.w_v(X).view(batch, seq_len, self.num_heads, self.head_dim).transpose(1, 2)

        attention_value = torch.matmul(Q, K.transpose(-1, -2))  # (batch, num_heads, seq_len, seq_len)
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = torch.matmul(attention_weight, V)  # (batch, num_heads, seq_len, head_dim)

        output = output.view(batch, seq_len, self.hidden_size)  # (batch, seq_len, hidden_size)
        return self.w_o(output)
