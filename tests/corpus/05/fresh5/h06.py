# expect: softmax_wrong_dim
# bug-lines: 26
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
        B, L, _ = X.shape
        split = lambda t: t.view(B, L, self.num_heads, self.head_dim).transpose(1, 2)
        Q, K, V = split(self.w_q(X)), split(self.w_k(X)), split(self.w_v(X))

        attention_value = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(self.head_dim)
        attention_weight = torch.softmax(attention_value, dim=2)
        output = torch.matmul(attention_weight, V)

        output = output.transpose(1, 2).flatten(2)
        return self.w_o(output)
