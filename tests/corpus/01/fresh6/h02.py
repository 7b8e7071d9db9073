# expect: pass
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """Self-attention written with einsum so the same code serves (T, d) and (B, T, d)."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.inv_temperature = 1.0 / math.sqrt(d_out)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        # one row per query token i, one column per key token j
        logits = torch.einsum("...id,...jd->...ij", q, k) * self.inv_temperature
        logits = logits - logits.amax(dim=-1, keepdim=True)
        p = logits.exp()
        p = p / p.sum(dim=-1, keepdim=True)
        return torch.einsum("...ij,...jd->...id", p, v)
