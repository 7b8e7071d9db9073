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

    def forward(self, X):
        batch, seq_len, _ = X.shape
        split = lambda t: t.reshape(batch, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        Q, K, V = split(self.w_q(X)), split(self.w_k(X)), split(self.w_v(X))

        attention_value = Q @ K.permute(0, 1, 3, 2)
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = attention_weight @ V

        output = output.permute(0, 2, 1, 3).reshape(batch, seq_len, self.hidden_size)
        return self.w_o(output)
