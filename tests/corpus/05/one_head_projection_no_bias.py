# expect: api_mismatch
# bug-lines: 14, 15, 16
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        # one head's projection, shared by every head, and without the contract's bias
        self.w_q = nn.Linear(hidden_size, self.head_dim, bias=False)
        self.w_k = nn.Linear(hidden_size, self.head_dim, bias=False)
        self.w_v = nn.Linear(hidden_size, self.head_dim, bias=False)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, X):
        B, T, C = X.shape
        q, k, v = (layer(X).unsqueeze(1).expand(B, self.num_heads, T, self.head_dim)
                   for layer in (self.w_q, self.w_k, self.w_v))
        weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, C)
        return self.w_o(out)
