# expect: softmax_wrong_dim
# bug-lines: 28
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
        B, T, C = X.shape
        H, D = self.num_heads, self.head_dim
        Q = self.w_q(X).view(B, T, H, D).transpose(1, 2)
        K = self.w_k(X).view(B, T, H, D).transpose(1, 2)
        V = self.w_v(X).view(B, T, H, D).transpose(1, 2)
        # attention_value: (B, H, T, T), indexed [b, h, query, key]
        attention_value = torch.matmul(Q, K.transpose(-1, -2))
        attention_weight = torch.softmax(attention_value / math.sqrt(D), dim=2)
        output = torch.matmul(attention_weight, V)
        output = output.transpose(1, 2).contiguous().view(B, T, C)
        return self.w_o(output)
