# expect: pass
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        assert hidden_size % num_heads == 0
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, X):
        B, T, C = X.shape
        H, D = self.num_heads, self.head_dim
        # keep the (B, T, H, D) layout and let einsum pick the axes
        Q = self.w_q(X).view(B, T, H, D)
        K = self.w_k(X).view(B, T, H, D)
        V = self.w_v(X).view(B, T, H, D)
        scores = torch.einsum("bthd,bshd->bhts", Q, K) / D**0.5
        weights = F.softmax(scores, dim=-1)
        out = torch.einsum("bhts,bshd->bthd", weights, V).reshape(B, T, C)
        return self.w_o(out)
