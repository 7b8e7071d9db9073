# expect: no_scaling
# also: out_proj_missing
# bug-lines: 11, 31
import math

import torch
import torch.nn as nn


def attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
    return weights @ v


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
        B, N, C = X.shape
        heads = lambda t: t.view(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        out = attention(heads(self.w_q(X)), heads(self.w_k(X)), heads(self.w_v(X)))
        out = out.transpose(1, 2).contiguous().view(B, N, C)
        return out
