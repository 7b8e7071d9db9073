# expect: pass
"""Self-attention, einsum version. The '...' lets the same code serve (T, d) and (B, T, d)."""
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query, self.W_key, self.W_value = [
            nn.Linear(d_in, d_out, bias=qkv_bias) for _ in range(3)
        ]

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        s = torch.einsum("...id,...jd->...ij", q, k) * self.d_out ** -0.5
        a = s.softmax(dim=-1)
        return torch.einsum("...ij,...jd->...id", a, v)
