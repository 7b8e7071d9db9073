# expect: pass
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """Self-attention written with einsum; works for (T, d_in) and (B, T, d_in)."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer("d_k", torch.tensor(float(d_out)), persistent=False)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.einsum("...id,...jd->...ij", q, k) * torch.rsqrt(self.d_k.to(q.dtype))
        weights = scores.softmax(dim=-1)
        return torch.einsum("...ij,...jd->...id", weights, v)
