# expect: scale_wrong_dim
# also: out_proj_missing
# bug-lines: 16, 29
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.norm = math.sqrt(hidden_size)
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, X):
        B, N, H = X.shape
        Q = self.w_q(X).reshape(B, N, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        K = self.w_k(X).reshape(B, N, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        V = self.w_v(X).reshape(B, N, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        attention_weight = torch.softmax(Q @ K.transpose(-1, -2) / self.norm, dim=-1)
        output = (attention_weight @ V).permute(0, 2, 1, 3).reshape(B, N, H)
        return output
