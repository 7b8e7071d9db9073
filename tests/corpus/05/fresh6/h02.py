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

    def forward(self, X):
        Q, K, V = self.w_q(X), self.w_k(X), self.w_v(X)
        # each head owns a contiguous chunk of head_dim features
        q_heads = Q.split(self.head_dim, dim=-1)
        k_heads = K.split(self.head_dim, dim=-1)
        v_heads = V.split(self.head_dim, dim=-1)
        outputs = []
        for q, k, v in zip(q_heads, k_heads, v_heads):
            scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.head_dim)
            weights = torch.softmax(scores, dim=-1)
            outputs.append(torch.bmm(weights, v))
        return self.w_o(torch.cat(outputs, dim=-1))
