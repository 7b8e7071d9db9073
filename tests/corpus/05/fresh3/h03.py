# expect: heads_split_wrong
# bug-lines: 23
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
        b, n, _ = t.shape
        # fixed: now each head is (seq_len, head_dim)
        return t.view(b, self.num_heads, n, self.head_dim)

    def forward(self, X):
        b, n, _ = X.shape
        Q = self.split_heads(self.w_q(X))
        K = self.split_heads(self.w_k(X))
        V = self.split_heads(self.w_v(X))
        attention_value = torch.matmul(Q, K.transpose(-1, -2))
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = torch.matmul(attention_weight, V)
        output = output.transpose(1, 2).reshape(b, n, self.hidden_size)
        return self.w_o(output)
