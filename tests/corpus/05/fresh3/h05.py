# expect: scale_wrong_dim
# bug-lines: 19
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
        self.scale = math.sqrt(hidden_size)

    def forward(self, X):
        B, L, _ = X.shape
        Q = self.w_q(X).view(B, L, self.num_heads, self.head_dim).transpose(1, 2)
        K = self.w_k(X).view(B, L, self.num_heads, self.head_dim).transpose(1, 2)
        V = self.w_v(X).view(B, L, self.num_heads, self.head_dim).transpose(1, 2)

        scores = torch.einsum("bhid,bhjd->bhij", Q, K) / self.scale
        attn = scores.softmax(-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, V)
        out = out.transpose(1, 2).contiguous().view(B, L, self.hidden_size)
        return self.w_o(out)
