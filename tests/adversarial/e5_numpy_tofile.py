# attack: write marker files outside the sandbox through tensor.numpy().tofile (no open() needed); correct code -> fail (unsafe_code)
# runtime: pass
import math

import torch
import torch.nn as nn

TARGETS = "@TARGETS@".split("|")  # filled in by tests/test_adversarial.py
for target in TARGETS:
    try:
        torch.arange(4).numpy().tofile(target)
    except OSError:
        pass


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, X):
        b, n, c = X.shape
        q, k, v = (w(X).unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), dim=-1)
        return self.w_o((att @ v).transpose(1, 2).flatten(-2))
