# expect: scale_not_sqrt
# bug-lines: 20
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """Self-attention (one head)."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        Q, K, V = self.W_query(x), self.W_key(x), self.W_value(x)
        # normalise the dot products by the dimension
        S = torch.matmul(Q, K.transpose(-1, -2)) / self.d_out
        A = S.softmax(dim=-1)
        return torch.matmul(A, V)
