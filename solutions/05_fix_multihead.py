"""Reference solution for exercise 5: the naive multi-head module with its split and merge fixed."""
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        assert hidden_size % num_heads == 0, "hidden_size must be divisible by num_heads"
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, X):
        B, T, C = X.shape
        nh, hs = self.num_heads, self.head_dim
        Q = self.w_q(X).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs); stage: queries
        K = self.w_k(X).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs); stage: keys
        V = self.w_v(X).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs); stage: values
        att = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(hs), dim=-1)  # (B, nh, T, T); stage: scores, scaled_scores, weights
        out = att @ V  # (B, nh, T, hs); stage: context
        out = out.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C); stage: merged
        return self.w_o(out)  # stage: output
