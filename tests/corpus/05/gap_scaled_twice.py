# expect: scale_not_sqrt
# bug-lines: 22, 25
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, X):
        bs, n, h = X.shape
        scale = 1 / math.sqrt(self.head_dim)
        q = self.w_q(X).reshape(bs, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3) * scale
        k = self.w_k(X).reshape(bs, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        v = self.w_v(X).reshape(bs, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        attn = (q @ k.transpose(-1, -2)) * scale  # scaled a second time
        attn = attn.softmax(-1)
        out = (attn @ v).permute(0, 2, 1, 3).reshape(bs, n, h)
        return self.w_o(out)
