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

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.head_dim, self.num_heads).permute(0, 3, 1, 2)

    def forward(self, X):
        b, n, _ = X.shape
        Q = self.split(self.w_q(X))
        K = self.split(self.w_k(X))
        V = self.split(self.w_v(X))
        attention_value = torch.matmul(Q, K.transpose(-1, -2))
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = torch.matmul(attention_weight, V)
        output = output.transpose(1, 2).contiguous().view(b, n, self.hidden_size)
        return self.w_o(output)
