# expect: pass
# held-out: correct fix; reshape + permute(0, 2, 1, 3) to split, permute back + reshape to merge.
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
        bsz, seq_len, _ = X.shape
        Q = self.w_q(X).reshape(bsz, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        K = self.w_k(X).reshape(bsz, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        V = self.w_v(X).reshape(bsz, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        attention_value = torch.matmul(Q, K.transpose(-1, -2))
        attention_weight = torch.softmax(attention_value / math.sqrt(self.head_dim), dim=-1)
        output = torch.matmul(attention_weight, V)
        output = output.permute(0, 2, 1, 3).reshape(bsz, seq_len, self.hidden_size)
        return self.w_o(output)
