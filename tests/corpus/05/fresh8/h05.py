# expect: view_noncontiguous
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
        b, s, h = X.shape
        Q = self.w_q(X).view(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        K = self.w_k(X).view(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        V = self.w_v(X).view(b, s, self.num_heads, self.head_dim).transpose(1, 2)

        attention_value = Q @ K.transpose(-1, -2)
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = attention_weight @ V

        output = output.transpose(1, 2).view(b, s, h)
        return self.w_o(output)
