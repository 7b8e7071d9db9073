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
        B, T, _ = X.shape
        Q = self.w_q(X).view(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        K = self.w_k(X).view(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        V = self.w_v(X).view(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        attention_value = Q @ K.transpose(-1, -2)
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = attention_weight @ V

        output = output.permute(0, 2, 3, 1).contiguous()
        output = output.view(B, T, self.hidden_size)
        return self.w_o(output)
