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

    def _split(self, t):
        b, s, _ = t.size()
        return t.view(b, s, self.num_heads, self.head_dim).transpose(1, 2)

    def _merge(self, t):
        b, _, s, _ = t.size()
        return t.transpose(1, 2).contiguous().view(b, s, self.hidden_size)

    def forward(self, X):
        Q = self._split(self.w_q(X))
        K = self._split(self.w_k(X))
        V = self._split(self.w_v(X))
        attention_weight = torch.softmax(Q @ K.transpose(-1, -2) / self.scale, dim=-1)
        return self.w_o(self._merge(attention_weight @ V))
