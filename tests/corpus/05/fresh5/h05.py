# expect: scale_wrong_dim
# also: out_proj_missing
# bug-lines: 26, 37
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
        batch_size, seq_len, _ = X.size()
        Q = self.w_q(X)
        K = self.w_k(X)
        V = self.w_v(X)
        d_k = K.size(-1)

        Q = Q.reshape(batch_size, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        K = K.reshape(batch_size, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        V = V.reshape(batch_size, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        attention_value = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(d_k)
        attention_weight = torch.softmax(attention_value, dim=-1)
        output = torch.matmul(attention_weight, V)

        output = output.permute(0, 2, 1, 3).reshape(batch_size, seq_len, self.hidden_size)
        return output
