# expect: pass
import math

import torch
import torch.nn as nn


def _softmax_last(z):
    z = z - z.amax(dim=-1, keepdim=True)
    e = torch.exp(z)
    return e / e.sum(dim=-1, keepdim=True)


class SelfAttention(nn.Module):
    """Single-head attention written with einsum."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.inv_scale = 1.0 / math.sqrt(d_out)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        logits = torch.einsum("...td,...sd->...ts", q, k) * self.inv_scale
        probs = _softmax_last(logits)
        return torch.einsum("...ts,...sd->...td", probs, v)
