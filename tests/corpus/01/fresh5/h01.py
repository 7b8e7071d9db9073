# expect: pass
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """Single-head self-attention, written with einsum so batched and unbatched inputs share one path."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        logits = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(self.d_out)
        attn = logits.softmax(dim=-1)
        return torch.einsum("...ij,...jd->...id", attn, v)
