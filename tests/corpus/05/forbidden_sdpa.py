# expect: forbidden_api
import torch
import torch.nn as nn
import torch.nn.functional as F


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
        B, T, C = X.shape
        Q = self.w_q(X).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        K = self.w_k(X).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        V = self.w_v(X).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        out = F.scaled_dot_product_attention(Q, K, V)
        return self.w_o(out.transpose(1, 2).reshape(B, T, C))
