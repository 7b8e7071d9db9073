# expect: pass
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
        return t.reshape(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, X):
        b, n, _ = X.shape
        Q = self.split_heads(self.w_q(X))
        K = self.split_heads(self.w_k(X))
        V = self.split_heads(self.w_v(X))
        attention_value = Q @ K.permute(0, 1, 3, 2) / math.sqrt(self.head_dim)
        attention_weight = torch.softmax(attention_value, dim=-1)
        output = (attention_weight @ V).permute(0, 2, 1, 3).reshape(b, n, self.hidden_size)
        return self.w_o(output)
