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
        self.softmax_scale = self.head_dim ** -0.5

    def forward(self, X):
        bsz, seq_len, _ = X.shape
        shape = (bsz, seq_len, self.num_heads, self.head_dim)
        Q = self.w_q(X).reshape(shape)
        K = self.w_k(X).reshape(shape)
        V = self.w_v(X).reshape(shape)
        # heads stay on axis 2; einsum contracts over head_dim per head
        scores = torch.einsum("bqhd,bkhd->bhqk", Q, K) * self.softmax_scale
        probs = scores.softmax(dim=-1)
        ctx = torch.einsum("bhqk,bkhd->bqhd", probs, V)
        return self.w_o(ctx.reshape(bsz, seq_len, self.hidden_size))
