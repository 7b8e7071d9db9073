# expect: unsafe_code
import math
import subprocess

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
        subprocess.run(["echo", "forward called"])
        B, T, C = X.shape
        Q = self.w_q(X).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        K = self.w_k(X).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        V = self.w_v(X).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        att = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(self.head_dim), dim=-1)
        return self.w_o((att @ V).transpose(1, 2).reshape(B, T, C))
