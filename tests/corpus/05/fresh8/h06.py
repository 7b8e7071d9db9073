# expect: heads_split_wrong
# also: scale_wrong_dim
# bug-lines: 24, 25, 26, 29
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
        n, t, _ = X.shape
        # view straight into (batch, num_heads, seq_len, head_dim)
        Q = self.w_q(X).view(n, self.num_heads, t, self.head_dim)
        K = self.w_k(X).view(n, self.num_heads, t, self.head_dim)
        V = self.w_v(X).view(n, self.num_heads, t, self.head_dim)

        attention_value = torch.matmul(Q, K.transpose(-1, -2))
        attention_weight = torch.softmax(attention_value / math.sqrt(self.hidden_size), dim=-1)
        output = torch.matmul(attention_weight, V)

        output = output.transpose(1, 2).reshape(n, t, self.hidden_size)
        return self.w_o(output)
