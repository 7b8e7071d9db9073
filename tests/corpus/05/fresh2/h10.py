# expect: scale_not_sqrt
# bug-lines: 24, 25
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
        b, n, _ = X.shape
        nh, hd = self.num_heads, self.head_dim
        # scale q and k before the product (numerically safer for large head_dim)
        Q = self.w_q(X).view(b, n, nh, hd).transpose(1, 2) / math.sqrt(hd)
        K = self.w_k(X).view(b, n, nh, hd).transpose(1, 2) / math.sqrt(hd)
        V = self.w_v(X).view(b, n, nh, hd).transpose(1, 2)

        attention_weight = torch.softmax(Q @ K.transpose(-1, -2), dim=-1)
        output = (attention_weight @ V).transpose(1, 2).reshape(b, n, self.hidden_size)
        return self.w_o(output)
