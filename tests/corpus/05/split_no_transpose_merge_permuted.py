# expect: heads_split_wrong
# bug-lines: 24
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

    def heads(self, t):
        batch, seq_len, _ = t.shape
        # the split stops at (batch, seq_len, num_heads, head_dim): the heads axis is never moved before the
        # tokens, so the products below mix heads of one token instead of tokens of one head
        return t.reshape(batch, seq_len, self.num_heads, self.head_dim)

    def forward(self, X):
        q, k, v = self.heads(self.w_q(X)), self.heads(self.w_k(X)), self.heads(self.w_v(X))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        out = torch.softmax(scores, dim=-1) @ v
        out = out.permute(0, 2, 1, 3).reshape(X.shape[0], X.shape[1], self.hidden_size)
        return self.w_o(out)
