# expect: no_scaling
# also: heads_merge_wrong
# bug-lines: 24,25
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
        n, L, _ = X.shape
        q = self.w_q(X).view(n, L, self.num_heads, -1).transpose(1, 2)
        k = self.w_k(X).view(n, L, self.num_heads, -1).transpose(1, 2)
        v = self.w_v(X).view(n, L, self.num_heads, -1).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        out = (att @ v).reshape(n, L, self.hidden_size)
        return self.w_o(out)
