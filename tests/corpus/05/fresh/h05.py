# expect: softmax_wrong_dim
# bug-lines: 29
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

    def split_heads(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, X):
        Q = self.split_heads(self.w_q(X))
        K = self.split_heads(self.w_k(X))
        V = self.split_heads(self.w_v(X))
        attention_value = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(self.head_dim)
        attention_weight = torch.softmax(attention_value, dim=2)
        output = torch.matmul(attention_weight, V)
        output = output.permute(0, 2, 1, 3).reshape(X.shape[0], X.shape[1], self.hidden_size)
        return self.w_o(output)
