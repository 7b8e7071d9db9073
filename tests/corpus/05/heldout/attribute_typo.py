# expect: runtime_error
# held-out: correct fix except forward reads self.head_size, never defined (AttributeError on every call); no catalog id names a runtime exception in forward (crash = process exit, import_error = top level), so the catch-all (relabelled runtime_error once the catalog had that id, issue 21).
# bug-lines: 23, 24, 25
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
        Q = self.w_q(X).view(B, T, self.num_heads, self.head_size).transpose(1, 2)
        K = self.w_k(X).view(B, T, self.num_heads, self.head_size).transpose(1, 2)
        V = self.w_v(X).view(B, T, self.num_heads, self.head_size).transpose(1, 2)
        att = torch.softmax(Q @ K.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1)
        out = (att @ V).transpose(1, 2).contiguous().view(B, T, self.hidden_size)
        return self.w_o(out)
